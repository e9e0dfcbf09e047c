import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct QueryFieldPathTests {
    let record = queryRecord(#"{"a":{"b":{"c":3},"x.y":"dotted"},"n":null,"s":"text","arr":[1,2],"a.b":"top"}"#)

    @Test func dottedPaths() throws {
        #expect(FieldPath("s").value(in: record, key: "k") == "text")
        #expect(FieldPath("a.b.c").value(in: record, key: "k") == 3)
        #expect(FieldPath("a.b").value(in: record, key: "k") == ["c": 3])
        #expect(FieldPath("n").value(in: record, key: "k") == .null)
        let p = try FieldPath(parsing: "a.b.c")
        #expect(p.names == ["a", "b", "c"] && !p.isKey && p.text == "a.b.c")
        #expect(p == FieldPath("a.b.c"))
    }

    @Test func arrayFormKeepsDotsInNames() throws {
        let p = try FieldPath(parsing: ["a", "x.y"])
        #expect(p.names == ["a", "x.y"])
        #expect(p.text == "a.x.y")
        #expect(p.value(in: record, key: "k") == "dotted")
        #expect(try FieldPath(parsing: ["a.b"]).value(in: record, key: "k") == "top")
        // The array form takes "$key" as a member's name.
        let member = try FieldPath(parsing: ["$key"])
        #expect(!member.isKey && member.value(in: ["$key": 1], key: "k") == 1)
    }

    @Test func keyPath() throws {
        let p = try FieldPath(parsing: "$key")
        #expect(p.isKey && p.names.isEmpty && p.text == "$key")
        #expect(p.value(in: [:], key: "2026-11-22/run") == "2026-11-22/run")
        #expect(FieldPath("$key") == p && FieldPath.key == p)
    }

    @Test func missingAndNonObjectIntermediates() {
        #expect(FieldPath("nope").value(in: record, key: "k") == nil)
        #expect(FieldPath("nope.deeper").value(in: record, key: "k") == nil)
        #expect(FieldPath("a.b.missing").value(in: record, key: "k") == nil)
        #expect(FieldPath("s.length").value(in: record, key: "k") == nil)  // a string is not an object
        #expect(FieldPath("n.x").value(in: record, key: "k") == nil)  // nor is null
        #expect(FieldPath("arr.0").value(in: record, key: "k") == nil)  // nor an array
        #expect(FieldPath("a.b.c.d").value(in: record, key: "k") == nil)  // nor a number
    }

    @Test func badPaths() {
        for bad: JSON in [1, true, .null, [], [1], ["a", 2], "", "a..b", "a.", ".a", [:]] {
            #expect(throws: OptimistError.self, "\(bad)") { try FieldPath(parsing: bad) }
        }
        #expect(FieldPath("a..b").names == ["a", "", "b"])  // Swift callers get what they wrote
    }
}
