import OptimistModel
import OptimistProtocol
import Testing

/// Every message decodes to what was encoded, through the one module the client's sync and
/// the server share.
@Suite struct RoundTripTests {
    static let ops: [Op] = [
        .put(collection: "logs", key: "2026-11-22/run", value: ["done": true, "minutes": 30, "habit": "run"]),
        .patch(collection: "logs", key: "k", value: ["note": "é \"quoted\"\n", "gone": .null]),
        .incr(collection: "stats", key: "today", field: "minutes", delta: 5),
        .delete(collection: "logs", key: "old"),
    ]

    @Test func pushRequest() throws {
        let request = PushRequest(clientID: "client-1", mutations: [
            PushedMutation(id: 1, retry: 0, ops: Self.ops),
            PushedMutation(id: 9_007_199_254_740_991, retry: 3, ops: [Self.ops[3]]),
        ])
        #expect(try PushRequest.decode(JSONParser.parse(request.encoded())) == request)
    }

    @Test func pushReplyWithEveryStatus() throws {
        let reply = PushReply(results: [
            PushResult(id: 1, outcome: .ok(ops: nil)),
            PushResult(id: 2, outcome: .ok(ops: [Self.ops[0]], renames: [KeyRename(collection: "logs", from: "tmp-1", to: "42")])),
            PushResult(id: 4, outcome: .rejected(error: "refused")),
            PushResult(id: 5, outcome: .retry(afterMs: 250, error: "busy")),
        ])
        #expect(try PushReply.decode(reply.encoded(), sent: [1, 2, 3, 4, 5, 6]) == reply)
        let bare = PushReply(results: [PushResult(id: 7, outcome: .retry(afterMs: nil, error: nil))])
        #expect(try PushReply.decode(bare.encoded(), sent: [7]) == bare)
    }

    @Test func pullRequest() throws {
        for cursor in [nil, "", "12345", "opaque/é"] as [String?] {
            let request = PullRequest(clientID: "c", cursor: cursor, unacked: [3, 1, 9_007_199_254_740_991])
            #expect(try PullRequest.decode(JSONParser.parse(request.encoded())) == request)
        }
        let digests = [OpsDigest.of([Self.ops[0]]), OpsDigest.of([Self.ops[3]])]
        let withDigests = PullRequest(clientID: "c", cursor: "db.7", unacked: [4, 5], digests: digests)
        #expect(try PullRequest.decode(JSONParser.parse(withDigests.encoded())) == withDigests)
    }

    /// Client and server digest what they parsed and re-wrote: the same ops give the same
    /// digest however their members were ordered on the way; other ops another one.
    @Test func opsDigest() throws {
        let reordered = try Op.decode(#"[{"value":{"minutes":30,"habit":"run","done":true},"op":"put","key":"2026-11-22/run","coll":"logs"}]"#)
        #expect(OpsDigest.of(reordered) == OpsDigest.of([Self.ops[0]]))
        #expect(OpsDigest.of(Self.ops).utf8.count == 32)
        #expect(OpsDigest.of([Self.ops[0]]) != OpsDigest.of([Self.ops[1]]))
        #expect(OpsDigest.of([Self.ops[2]]) != OpsDigest.of([.incr(collection: "stats", key: "today", field: "minutes", delta: 6)]))
        #expect(OpsDigest.of(Self.ops) != OpsDigest.of(Self.ops.reversed()))
    }

    @Test func pullReply() throws {
        let reply = PullReply(cursor: "17", more: true, changes: [Self.ops[0], Self.ops[3]], outcomes: [
            PullOutcome(id: 3, outcome: .ok, retry: 0),
            PullOutcome(id: 4, outcome: .rejected(error: "no"), retry: 2),
            PullOutcome(id: 5, outcome: .ok, retry: nil),
        ])
        #expect(try PullReply.decode(reply.encoded()) == reply)
        let reset = PullReply(cursor: "db2.0", more: false, changes: [Self.ops[3]], outcomes: [], reset: true)
        #expect(try PullReply.decode(reset.encoded()) == reset)
        #expect(!reply.encoded().contains("reset"))
    }

    /// A server writes stored values as the text they are; a client reads the same ops.
    @Test func pullReplyFromStoredText() throws {
        let record: Record = ["a": 1, "b": ["c": "d \u{1}"]]
        let bytes = PullReply.encode(cursor: "9", more: false, changes: [
            PulledChange(collection: "c\"1", key: "k/é", value: JSONWriter.string(record)),
            PulledChange(collection: "c", key: "gone", value: nil),
        ], outcomes: [PullOutcome(id: 2, outcome: .rejected(error: "bad"), retry: 1)])
        let decoded = try PullReply.decode(String(decoding: bytes, as: UTF8.self))
        #expect(decoded == PullReply(cursor: "9", more: false, changes: [
            .put(collection: "c\"1", key: "k/é", value: record), .delete(collection: "c", key: "gone"),
        ], outcomes: [PullOutcome(id: 2, outcome: .rejected(error: "bad"), retry: 1)]))
        let reset = PullReply.encode(cursor: "x.0", more: true, changes: [], outcomes: [], reset: true)
        #expect(try PullReply.decode(String(decoding: reset, as: UTF8.self)).reset)
    }
}

/// What is not the protocol is refused with a message, on both sides.
@Suite struct ViolationTests {
    func request(_ text: String) -> String? {
        do {
            _ = try PushRequest.decode(try JSONParser.parse(text))
            return nil
        } catch let v as ProtocolViolation { return v.message } catch { return "not JSON" }
    }

    @Test func requestsOutsideTheProtocol() {
        #expect(request(#"[]"#) == "the body must be a JSON object")
        #expect(request(#"{"client_id":"c","mutations":[]}"#) == "protocol is missing")
        #expect(request(#"{"protocol":3,"client_id":"c","mutations":[]}"#)?.hasPrefix("unsupported protocol") == true)
        #expect(request(#"{"protocol":2,"client_id":"c","mutations":[]}"#) == nil)
        #expect(request(#"{"protocol":1,"client_id":"","mutations":[]}"#)?.hasPrefix("client_id must be 1 to") == true)
        #expect(request(#"{"protocol":1,"client_id":"\#(String(repeating: "x", count: 201))","mutations":[]}"#)?.hasPrefix("client_id") == true)
        #expect(request(#"{"protocol":1,"client_id":"c","mutations":{}}"#) == "mutations must be an array")
        #expect(request(#"{"protocol":1,"client_id":"c","mutations":[{"id":9007199254740992,"ops":[]}]}"#)?.contains("2^53-1") == true)
        #expect(request(#"{"protocol":1,"client_id":"c","mutations":[{"id":1.5,"ops":[]}]}"#)?.contains("whole number") == true)
        #expect(request(#"{"protocol":1,"client_id":"c","mutations":[{"id":1,"ops":[{"op":"nope"}]}]}"#)?.hasPrefix("mutations[0].ops[0]") == true)
        #expect(request(#"{"protocol":1,"client_id":"c","mutations":[{"id":1,"ops":[]}]}"#) == nil)
        func pull(_ text: String) -> String? {
            do {
                _ = try PullRequest.decode(try JSONParser.parse(text))
                return nil
            } catch let v as ProtocolViolation { return v.message } catch { return "not JSON" }
        }
        #expect(pull(#"{"protocol":1,"client_id":"c","unacked":[1],"unacked_digests":[]}"#) == "unacked_digests must have one digest per unacked id")
        #expect(pull(#"{"protocol":1,"client_id":"c","unacked":[1],"unacked_digests":[7]}"#) == "unacked_digests[0] must be a string")
        #expect(pull(#"{"protocol":1,"client_id":"c","unacked":[1],"unacked_digests":["d"]}"#) == nil)
    }

    func reply(_ text: String, sent: [MutationID]) -> String? {
        do {
            _ = try PushReply.decode(text, sent: sent)
            return nil
        } catch { return error.message }
    }

    @Test func pushRepliesOutsideTheProtocol() {
        #expect(reply("not json", sent: [1])?.hasPrefix("the reply is not JSON") == true)
        #expect(reply(#"{"results":[{"id":3,"status":"ok"}]}"#, sent: [1]) == "a push result names mutation 3, which was not sent")
        #expect(reply(#"{"results":[{"id":2,"status":"ok"},{"id":1,"status":"ok"}]}"#, sent: [1, 2])?.contains("order") == true)
        #expect(reply(#"{"results":[{"id":1,"status":"ok"},{"id":1,"status":"ok"}]}"#, sent: [1, 2])?.contains("twice") == true)
        #expect(reply(#"{"results":[{"id":1,"status":"retry"},{"id":2,"status":"ok"}]}"#, sent: [1, 2]) == "a push result follows a retry (mutation 2)")
        #expect(reply(#"{"results":[{"id":1,"status":"maybe"}]}"#, sent: [1]) == #"push result 1 has an unknown status "maybe""#)
        #expect(reply(#"{"results":[{"id":1,"status":"ok","renames":[{"coll":"c","from":"a","to":""}]}]}"#, sent: [1])?.contains("rename") == true)
    }

    @Test func pullRepliesOutsideTheProtocol() {
        func pull(_ text: String) -> String? {
            do {
                _ = try PullReply.decode(text)
                return nil
            } catch { return error.message }
        }
        #expect(pull(#"{"changes":[]}"#) == "a pull reply needs a string cursor")
        #expect(pull(#"{"cursor":"1","more":"yes"}"#) == "more must be true or false")
        #expect(pull(#"{"cursor":"1","outcomes":[{"id":1,"status":"retry"}]}"#) == "outcome 1 needs status ok or rejected")
        #expect(pull(#"{"cursor":"1","outcomes":[{"id":1,"status":"ok","retry":-1}]}"#)?.contains("retry must be") == true)
        #expect(pull(#"{"cursor":"1","changes":[{"coll":"c","key":"k","op":"incr"}]}"#)?.hasPrefix("a pulled change") == true)
        #expect(pull(#"{"cursor":"1","reset":1}"#) == "reset must be true or false")
        #expect(pull(#"{"cursor":"1"}"#) == nil)
    }
}
