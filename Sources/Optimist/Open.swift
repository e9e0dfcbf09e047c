/// Opening stores: in memory, or on a SQLite file.
extension Store {
    /// Opens a store: `nil` is an in-memory store; a path is a SQLite file, created if absent.
    public static func open(path: String?) throws(OptimistError) -> Store {
        guard let path else { return Store() }
        throw .io("file-backed stores are not built yet: \(path)")
    }
}
