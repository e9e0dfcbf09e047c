import Testing
import OptimistCore
import OptimistModel

/// The limits on one mutation (`Limits`): at each limit a mutation is accepted; one over,
/// `mutate` refuses it (`invalid`, naming the limit) and nothing changes, not even the next id.
@Suite struct LimitsTests {
    let s = Store()

    /// A record nested `levels` deep (the record is level 1), alternating objects and arrays.
    func nested(_ levels: Int) -> Record {
        var value: JSON = .null
        for level in stride(from: levels, through: 2, by: -1) {
            value = level % 2 == 0 ? .array([value]) : .object(["o": value])
        }
        return levels == 1 ? [:] : ["v": value]
    }

    /// `ops` are refused naming `figure`, and the store is as it was: same pending count, no
    /// record at `probe`, and the next mutation gets the id the refused one would have had.
    func refused(_ ops: [Op], _ figure: String, probe: (Key, Key)) throws {
        let pending = try s.pendingCount()
        let next = try s.mutate([.put(collection: "probe", key: "id", value: [:])]) + 1
        do {
            try s.mutate(ops)
            Issue.record("accepted ops over a limit (expected a refusal naming \(figure))")
        } catch {
            guard case .invalid(let m) = error else { Issue.record("not invalid: \(error)"); return }
            #expect(m.contains(figure), "\(m.prefix(300))")
        }
        #expect(try s.pendingCount() == pending + 1)
        #expect(try s.get(probe.0, probe.1) == nil)
        #expect(try s.mutate([.delete(collection: "probe", key: "id")]) == next)
    }

    @Test func namesAreCountedInUTF8Bytes() throws {
        let at = Key(String(repeating: "n", count: Limits.maxNameBytes))
        let over = Key(String(repeating: "n", count: Limits.maxNameBytes + 1))
        let accented = Key(String(repeating: "é", count: Limits.maxNameBytes / 2))   // 1024 bytes
        try s.mutate([.put(collection: at, key: at, value: [:])])
        try s.mutate([.put(collection: "c", key: accented, value: [:])])
        try s.mutate([.incr(collection: at, key: at, field: "n", delta: 1)])
        try refused([.put(collection: over, key: "k", value: [:])], "1024", probe: (over, "k"))
        try refused([.put(collection: "c", key: over, value: [:])], "1024", probe: ("c", over))
        try refused([.put(collection: "c", key: Key(accented.string + "x"), value: [:])], "1024", probe: ("c", Key(accented.string + "x")))
        try refused([.put(collection: "c", key: "fine", value: [:]), .delete(collection: "c", key: over)], "1024", probe: ("c", "fine"))
        try refused([.incr(collection: "c", key: over, field: "n", delta: 1)], "1024", probe: ("c", over))
        try refused([.patch(collection: over, key: "k", value: [:])], "1024", probe: (over, "k"))
    }

    @Test func depthCountsTheRecordAsLevelOne() throws {
        try s.mutate([.put(collection: "deep", key: "at", value: nested(Limits.maxDepth))])
        #expect(try s.get("deep", "at") == nested(Limits.maxDepth))
        try s.mutate([.patch(collection: "deep", key: "at2", value: nested(Limits.maxDepth))])
        try refused([.put(collection: "deep", key: "over", value: nested(Limits.maxDepth + 1))], "64", probe: ("deep", "over"))
        try refused([.patch(collection: "deep", key: "over", value: ["a": .object(nested(Limits.maxDepth))])], "64",
                    probe: ("deep", "over"))
        // Deeper than the JSON parser itself takes (a value built in Swift): refused the same way.
        try refused([.put(collection: "deep", key: "over", value: nested(JSONParser.maxDepth + 10))], "64", probe: ("deep", "over"))
    }

    /// A put of `{"s": "x…"}` whose ops text is exactly `total` bytes.
    func put(_ key: Key, totalBytes total: Int) -> Op {
        let overhead = Op.encode([.put(collection: "c", key: key, value: ["s": ""])]).utf8.count
        return .put(collection: "c", key: key, value: ["s": .string(String(repeating: "x", count: total - overhead))])
    }

    @Test func theOpsTextIsMeasuredExactly() throws {
        let at = put("at", totalBytes: Limits.maxMutationBytes)
        #expect(Op.encode([at]).utf8.count == Limits.maxMutationBytes)
        try s.mutate([at])
        try refused([put("over", totalBytes: Limits.maxMutationBytes + 1)], "4194304", probe: ("c", "over"))
        // Control characters take 6 bytes each as JSON text (\u0001): counted as written.
        let overhead = Op.encode([.put(collection: "c", key: "ctl", value: ["s": ""])]).utf8.count
        let fits = (Limits.maxMutationBytes - overhead) / 6
        try s.mutate([.put(collection: "c", key: "ctl", value: ["s": .string(String(repeating: "\u{1}", count: fits))])])
        try refused([.put(collection: "c", key: "ctl2", value: ["s": .string(String(repeating: "\u{1}", count: fits + 1))])], "4194304",
                    probe: ("c", "ctl2"))
        // Ops together: two halves fit ("[" a "," b "]"); one more op does not.
        let half = put("a", totalBytes: Limits.maxMutationBytes / 2)
        let other = put("b", totalBytes: Limits.maxMutationBytes / 2)
        try s.mutate([half, other])
        try refused([half, other, .delete(collection: "c", key: "z")], "4194304", probe: ("c", "a-none"))
    }

    @Test func opsPerMutation() throws {
        let many = (0..<Limits.maxOpsPerMutation).map { Op.delete(collection: "many", key: Key("k\($0)")) }
        try s.mutate(many)
        try refused(many + [.put(collection: "many", key: "x", value: [:])], "10000", probe: ("many", "x"))
    }
}
