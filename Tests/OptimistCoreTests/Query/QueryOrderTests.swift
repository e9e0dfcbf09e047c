import Testing
@testable import OptimistCore
@testable import OptimistModel

/// Parses JSON text in a test (the text is the test's own, so it is well formed).
func queryJSON(_ text: String) -> JSON { try! JSONParser.parse(text) }
func queryRecord(_ text: String) -> Record { try! JSONParser.parseObject(text) }

@Suite struct QueryOrderTests {
    /// One value of each kind, in ascending order (nil: missing).
    /// Arrays and objects by their text: `["a"]` < `[1]` < `[]` as '"' < '1' < ']', and
    /// `{"a":1}` < `{}` as '"' < '}'.
    let ladder: [JSON?] = [nil, .null, false, true, -1.5, 0, 2, "", "a", "b", ["a"], [1], [], ["a": 1], [:]]

    @Test func everyKindPairInOrder() {
        for (i, a) in ladder.enumerated() {
            for (j, b) in ladder.enumerated() {
                let c = QueryOrder.compare(a, b)
                let want = i < j ? -1 : (i > j ? 1 : 0)
                #expect(c.signum() == want, "compare(\(String(describing: a)), \(String(describing: b))) = \(c)")
                #expect(QueryOrder.equal(a, b) == (i == j))
            }
        }
    }

    @Test func numbersByValue() {
        #expect(QueryOrder.compare(1, 1.0) == 0)
        #expect(QueryOrder.equal(1, 1.0))
        #expect(QueryOrder.compare(0.0, .number(-0.0)) == 0)
        #expect(QueryOrder.compare(-2, 1) < 0)
        #expect(QueryOrder.compare(10, 9) > 0)  // by value, not text
        #expect(QueryOrder.compare(1e300, -1e300) > 0)
    }

    @Test func stringsBytewise() {
        #expect(QueryOrder.compare("Z", "a") < 0)  // uppercase before lowercase, bytewise
        #expect(QueryOrder.compare("a", "ab") < 0)
        #expect(QueryOrder.compare("2026-11-09", "2026-11-10") < 0)
        #expect(QueryOrder.compare("é", "z") > 0)  // a two-byte UTF-8 after ASCII
        // Canonically equivalent, but different bytes: different values, in byte order.
        let composed: JSON = "\u{e9}", decomposed: JSON = "e\u{301}"
        #expect(!QueryOrder.equal(composed, decomposed))
        #expect(QueryOrder.compare(decomposed, composed) < 0)
        #expect(QueryOrder.compare(composed, decomposed) > 0)
    }

    @Test func arraysAndObjectsByCanonicalText() {
        // "[10]" < "[9]" bytewise: arrays compare by text, not element by element.
        #expect(QueryOrder.compare([10], [9]) < 0)
        #expect(QueryOrder.compare([1, 2], [1]) < 0)  // "[1,2]" vs "[1]": ',' < ']'
        #expect(QueryOrder.compare([1.0], [1]) == 0)
        #expect(QueryOrder.equal([1.0, "x"], [1, "x"]))
        // Members sorted by name in the text, whatever order they were written in.
        let ab = queryJSON(#"{"a":1,"b":2}"#), ba = queryJSON(#"{"b":2,"a":1}"#)
        #expect(QueryOrder.compare(ab, ba) == 0)
        #expect(QueryOrder.equal(ab, ba))
        #expect(QueryOrder.compare(queryJSON(#"{"a":2}"#), queryJSON(#"{"b":1}"#)) < 0)
        #expect(QueryOrder.compare(queryJSON(#"{"a":{"c":1}}"#), queryJSON(#"{"a":{"b":1}}"#)) > 0)
        #expect(!QueryOrder.equal(queryJSON(#"{"a":1}"#), queryJSON(#"{"a":1,"b":null}"#)))
        #expect(QueryOrder.compare([[]], [:]) < 0)  // kinds first: every array before every object
        #expect(QueryOrder.compare(["z"], [:]) < 0)
    }

    @Test func tiesWithinAKind() {
        #expect(QueryOrder.compare(nil, nil) == 0)
        #expect(QueryOrder.compare(.null, .null) == 0)
        #expect(QueryOrder.compare(true, true) == 0)
        #expect(QueryOrder.compare("x", "x") == 0)
        #expect(QueryOrder.compare([1, [2]], [1, [2.0]]) == 0)
        #expect(!QueryOrder.equal(nil, .null))
        #expect(!QueryOrder.equal(0, false))
        #expect(!QueryOrder.equal("1", 1))
    }
}
