import Testing
import OptimistModel
import OptimistProtocol

/// A server-assigned key (a rename's `to`) rewrites the client's pending ops: one over
/// `Limits.maxNameBytes` would make mutations the client itself refuses to make, so the reply
/// is outside the protocol (nothing applied, nothing lost).
@Suite struct RenameLimitTests {
    func reply(to key: String) -> String {
        JSONWriter.string(["results": [["id": 1, "status": "ok",
                                         "renames": [["coll": "notes", "from": "tmp-1", "to": .string(key)]]]]])
    }

    @Test func aRenameToAKeyOverTheLimitIsOutsideTheProtocol() throws {
        let at = String(repeating: "k", count: Limits.maxNameBytes)
        let decoded = try PushReply.decode(reply(to: at), sent: [1])
        #expect(decoded.results.first?.outcome == .ok(ops: nil, renames: [KeyRename(collection: "notes", from: "tmp-1", to: Key(at))]))
        do {
            _ = try PushReply.decode(reply(to: at + "é"), sent: [1])
            Issue.record("a rename to a key of \(Limits.maxNameBytes + 2) bytes was taken")
        } catch {
            #expect(error.message.contains("\(Limits.maxNameBytes)"), "\(error.message)")
        }
    }
}
