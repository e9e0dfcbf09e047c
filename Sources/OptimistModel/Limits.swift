/// The limits on one mutation's content, the same in the library and the reference server.
///
/// The library refuses a mutation over any of them when it is made (`invalid`, nothing
/// changes), so that no mutation can reach a server that would refuse it as a whole request
/// and stop the outbox behind it. The server refuses the same mutation as that mutation's
/// `rejected` result. Documented in `docs/protocol.md` ("Limits").
public enum Limits {
    /// The most bytes (UTF-8) in a collection name or a record key. PostgreSQL's index rows
    /// hold about 2.7 KB; a name and a key at this limit, with the user, stay well below it.
    public static let maxNameBytes = 1024
    /// The deepest nesting of a record's value, the record itself being level 1 (a record
    /// holding an object holding an array is level 3). The wire envelope adds a few levels,
    /// which stay far below ``JSONParser/maxDepth``.
    public static let maxDepth = 64
    /// The most bytes of one mutation's ops written as JSON text (as a push carries them).
    public static let maxMutationBytes = 4 << 20
    /// The most ops in one mutation.
    public static let maxOpsPerMutation = 10_000
}
