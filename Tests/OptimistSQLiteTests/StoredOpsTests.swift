import Testing
import OptimistCore
import OptimistOpen
@testable import OptimistSQLite
import OptimistModel
import OptimistC

/// The fast decoder of stored ops agrees with the generic JSON path on everything the store
/// writes, and damaged rows are CORRUPT either way.
@Suite struct StoredOpsTests {
    func decode(_ text: String) throws -> [Op] {
        var t = text
        return try t.withUTF8 { b in try StoredOps.decode(b, id: 1) }
    }

    func fast(_ text: String) -> [Op]? {
        var t = text
        return t.withUTF8 { b in
            var s = StoredOps.Scanner(bytes: b)
            return s.ops()
        }
    }

    static let samples: [[Op]] = [
        [.put(collection: "todos", key: "t1", value: ["title": "todo", "n": 1])],
        [.patch(collection: "c", key: "k", value: ["a": .null, "b": ["x": [1, 2, ["y": "}{]["]]]])],
        [.delete(collection: "c", key: "")],
        [.incr(collection: "stats", key: "today", field: "count", delta: -2.5)],
        [.incr(collection: "s", key: "k", field: "f", delta: 1e-300), .incr(collection: "s", key: "k", field: "g", delta: 12_345_678_901_234_567_168)],
        [.put(collection: "é", key: "🙂", value: ["quote\"d": "back\\slash", "nl": "a\nb", "ctl": "\u{1}"])],
        [.put(collection: "c\"q", key: "k\\", value: [:]), .delete(collection: "c", key: "tab\tkey")],
        [.patch(collection: "c", key: "k", value: ["s": "{not an object"]), .delete(collection: "a", key: "b"),
         .incr(collection: "a", key: "b", field: "n", delta: 0)],
    ]

    @Test(arguments: samples)
    func roundTripsLikeTheGenericPath(ops: [Op]) throws {
        let text = Op.encode(ops)
        #expect(try decode(text) == ops)
        var t = text
        #expect(try t.withUTF8 { b in try StoredOps.generic(b) } == ops)
    }

    @Test func theFastPathTakesWhatTheStoreWrites() {
        // Plain names take the fast path; names with escapes fall back to the generic parser.
        #expect(fast(Op.encode(Self.samples[0])) == Self.samples[0])
        #expect(fast(Op.encode(Self.samples[3])) == Self.samples[3])
        #expect(fast(Op.encode(Self.samples[1])) == Self.samples[1])  // brackets inside a value's strings
        #expect(fast(Op.encode(Self.samples[7])) == Self.samples[7])
        #expect(fast(Op.encode(Self.samples[6])) == nil)
        #expect(fast(#"[{"key":"k","coll":"c","op":"delete"}]"#) == nil)   // another member order
    }

    @Test(arguments: ["", "[]", "{}", "not json", #"[{"coll":"c","key":"k","op":"put"}]"#,
                      #"[{"coll":"c","key":"k","op":"zap"}]"#, #"[{"coll":"c","delta":nan,"field":"n","key":"k","op":"incr"}]"#,
                      #"[{"coll":"c","key":"k","op":"put","value":{"a":1}"#, #"[{"coll":"c","key":"k","op":"delete"}] x"#])
    func damagedOpsAreCorrupt(text: String) {
        #expect(throws: OptimistError.self) { try decode(text) }
        do { _ = try decode(text) } catch { #expect((error as? OptimistError)?.code == 8) }
    }

    @Test func invalidUTF8InANameIsCorrupt() {
        var bytes = Array(#"[{"coll":"c","key":"k"#.utf8) + [0xFF, 0xFE] + Array(#"","op":"delete"}]"#.utf8)
        let code = bytes.withUnsafeMutableBufferPointer { b -> Int32 in
            do { _ = try StoredOps.decode(UnsafeBufferPointer(b), id: 1); return 0 } catch { return (error as? OptimistError)?.code ?? -1 }
        }
        #expect(code == 8)
    }
}
