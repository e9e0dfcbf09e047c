extension TypedCollection {
    /// Defines an ordered index on the field at `keyPath` (see ``fieldName(_:)``), so that a
    /// live query filtering on that field (`filter(\.habit, .eq, "run")`, `in:`, a range, a
    /// `prefix`) reads its first rows through the index instead of the whole collection (see
    /// ``/OptimistCore/Store/defineIndex(collection:field:)``). Idempotent; a store file keeps
    /// it across reopens.
    ///
    /// ```swift
    /// try logs.defineIndex(\.habit)
    /// let runs = try logs.query().filter(\.habit, .eq, "run").sorted(by: \.day, descending: true).live()
    /// ```
    public func defineIndex<Field: Encodable>(_ keyPath: KeyPath<Value, Field>) throws(CollectionError) {
        let field = FieldPath(names: [Key(try fieldName(keyPath))])
        try storeCall { () throws(OptimistError) in try store.defineIndex(collection: name, field: field) }
    }

    /// The same with the field given by its path as stored (`"meta.day"`), for a nested field
    /// or a type the key path probe cannot sample.
    public func defineIndex(field: FieldPath) throws(CollectionError) {
        try storeCall { () throws(OptimistError) in try store.defineIndex(collection: name, field: field) }
    }
}
