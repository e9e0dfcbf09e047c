import Testing
@testable import OptimistCore
@testable import OptimistModel
import OptimistTestSupport

/// An index's sort keys (``IndexKey``) order values as the queries' total order does, and the
/// spans a predicate gives an index (``QueryPredicate/indexBounds(for:)``) hold every value
/// that passes it.
@Suite struct IndexKeyTests {
    /// Values that stress the order: every kind, -0 and 0, ties across 1 and 1.0, NUL bytes,
    /// prefixes of one another, nested arrays and objects.
    static func value(_ g: inout SeededRandom, depth: Int = 0) -> JSON? {
        let strings = ["", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é", "\u{0}", "p", "p1", "zz"]
        switch Int.random(in: 0..<10, using: &g) {
        case 0: return nil
        case 1: return .null
        case 2: return .bool(Bool.random(using: &g))
        case 3, 4:
            let numbers: [Double] = [-1e300, -2.5, -1, -0.0, 0, 1, 1.0, 2.5, 1e300, 1e-300, -1e-300]
            return .number(numbers.randomElement(using: &g)!)
        case 5, 6: return .string(strings.randomElement(using: &g)!)
        case 7 where depth < 2:
            return .array((0..<Int.random(in: 0...2, using: &g)).map { _ in value(&g, depth: depth + 1) ?? .null })
        case 8 where depth < 2:
            var o = [Key: JSON]()
            for _ in 0..<Int.random(in: 0...2, using: &g) { o[Key(strings.randomElement(using: &g)!)] = value(&g, depth: depth + 1) ?? .null }
            return .object(o)
        default: return .number(Double(Int.random(in: -3...3, using: &g)))
        }
    }

    @Test func sortKeysOrderValuesAsTheTotalOrderDoes() {
        var g = SeededRandom(seed: 11)
        for _ in 0..<20_000 {
            let a = Self.value(&g), b = Self.value(&g)
            let want = QueryOrder.compare(a, b)
            let got = IndexKey.compare(IndexKey.encode(a), IndexKey.encode(b))
            #expect(got == (want < 0 ? -1 : (want > 0 ? 1 : 0)), "\(String(describing: a)) vs \(String(describing: b))")
        }
        #expect(IndexKey.encode(.number(-0.0)) == IndexKey.encode(.number(0)))
    }

    @Test func spansHoldEveryValueThePredicatePasses() throws {
        var g = SeededRandom(seed: 12)
        let field = FieldPath("f")
        let specs = [
            #"{"field": "f", "eq": 1}"#, #"{"field": "f", "lt": 1}"#, #"{"field": "f", "le": "a"}"#,
            #"{"field": "f", "gt": -0.0}"#, #"{"field": "f", "ge": "a\u0000"}"#, #"{"field": "f", "lt": true}"#,
            #"{"field": "f", "ge": false}"#, #"{"field": "f", "gt": null}"#, #"{"field": "f", "le": [1]}"#,
            #"{"field": "f", "in": [1, "a", null, [], {}]}"#, #"{"field": "f", "prefix": "a"}"#,
            #"{"field": "f", "prefix": ""}"#, #"{"field": "f", "eq": {"a": [1, 2]}}"#,
            #"{"and": [{"field": "f", "ge": 0}, {"field": "f", "lt": 2}, {"field": "g", "eq": 1}]}"#,
            #"{"or": [{"field": "f", "eq": "b"}, {"field": "f", "prefix": "p"}]}"#,
        ]
        for text in specs {
            let predicate = try Self.predicate(text)
            let spans = try #require(predicate.indexBounds(for: field), "\(text) fits an index on f")
            let merged = IndexBounds.normalized(spans)
            for _ in 0..<3000 {
                let v = Self.value(&g)
                var record: Record = ["g": 1]
                if let v { record["f"] = v }
                guard predicate.matches(record, key: "k", status: .confirmed) else { continue }
                let k = IndexKey.encode(v)
                #expect(merged.contains { $0.contains(k) }, "\(text) passes \(String(describing: v)) outside its spans")
            }
        }
        // What narrows no field, or another one, fits no index on f.
        for text in [#"{"field": "f", "ne": 1}"#, #"{"not": {"field": "f", "eq": 1}}"#, #"{"field": "f", "exists": true}"#,
                     #"{"status": "pending"}"#, #"{"field": "g", "eq": 1}"#, #"{"or": [{"field": "f", "eq": 1}, {"field": "g", "eq": 1}]}"#] {
            #expect(try Self.predicate(text).indexBounds(for: field) == nil, "\(text)")
        }
    }

    static func predicate(_ text: String) throws -> QueryPredicate {
        try #require(try QuerySpec(parsing: #"{"collection": "a", "where": "# + text + "}").predicate)
    }

    @Test func normalizedSpansAreDisjointAndInOrder() {
        let one = IndexBounds.exactly(.number(1))
        let spans = IndexBounds.normalized([one, IndexBounds.exactly(.number(0)), one,
                                            IndexBounds(lower: IndexKey.encode(.number(0.5)), upper: nil)])
        #expect(spans.count == 2)
        #expect(spans[0] == IndexBounds.exactly(.number(0)))
        #expect(spans[1].upper == nil)
    }
}
