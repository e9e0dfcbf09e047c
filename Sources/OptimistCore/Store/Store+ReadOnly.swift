import OptimistModel
/// Read-only stores: a second process's view of a store file (see `SQLiteStoreFile.openReadOnly`).
extension Store {
    /// Makes this store read-only: called once, by the open, before the store is handed out.
    package func becomeReadOnly() throws(OptimistError) {
        try arrange { e in e.readOnly = true }
    }

    /// Whether this store was opened read-only: reads, queries and subscriptions work, every
    /// change is `.misuse`.
    public var isReadOnly: Bool { (try? read { e in e.readOnly }) ?? false }

    /// The refusal of a change to a read-only store.
    package static let readOnlyRefusal = OptimistError.misuse("this store was opened read-only: it shows the file as it was when opened, and takes no changes")
}
