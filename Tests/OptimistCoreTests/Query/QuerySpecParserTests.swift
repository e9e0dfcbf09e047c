import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct QuerySpecParserTests {
    @Test func fullSpecParses() throws {
        let spec = try QuerySpec(parsing: #"""
            {"collection": "logs",
             "range": {"prefix": "2026-11-"},
             "where": {"and": [{"field": "habit", "eq": "run"},
                               {"field": ["meta.x", "y"], "in": [1, "a"]},
                               {"or": [{"field": "note", "prefix": "am"}, {"field": "n", "exists": false}]},
                               {"not": {"status": "failed"}},
                               {"field": "$key", "ge": "2026-11-02"}]},
             "order": [{"field": "day", "desc": true}, {"field": "minutes"}, {"field": "a.b", "desc": false}],
             "limit": 50}
            """#)
        let want = try QuerySpec(
            collection: "logs", range: .prefix("2026-11-"),
            predicate: .and([.compare(FieldPath("habit"), .eq, "run"),
                             .isIn(FieldPath(names: ["meta.x", "y"]), [1, "a"]),
                             .or([.prefix(FieldPath("note"), "am"), .exists(FieldPath("n"), false)]),
                             .not(.status(.failed)),
                             .compare(.key, .ge, "2026-11-02")]),
            order: [QueryOrderItem(field: FieldPath("day"), descending: true), QueryOrderItem(field: FieldPath("minutes")),
                    QueryOrderItem(field: FieldPath("a.b"))],
            limit: 50)
        #expect(spec == want)
        #expect(spec.readsStatus)
    }

    @Test func groupSpecParses() throws {
        let spec = try QuerySpec(parsing: #"""
            {"collection": "logs", "range": {"from": "2026-11-01", "to": "2026-12-01"}, "limit": 3,
             "group": {"by": ["habit", ["a.b"]],
                       "aggregates": {"n": "count", "total": "sum:minutes", "avg": "avg:minutes",
                                      "first": "min:day", "last": "max:meta.day", "k": "max:$key"}}}
            """#)
        #expect(spec.collection == "logs")
        #expect(spec.range == .between(from: "2026-11-01", to: "2026-12-01"))
        #expect(spec.predicate == nil && spec.order.isEmpty && spec.limit == 3 && !spec.readsStatus)
        let group = try #require(spec.group)
        #expect(group.by == [FieldPath("habit"), FieldPath(names: ["a.b"])])
        #expect(group.aggregates == [
            QueryAggregate(name: "avg", kind: .avg(FieldPath("minutes"))),
            QueryAggregate(name: "first", kind: .min(FieldPath("day"))),
            QueryAggregate(name: "k", kind: .max(.key)),
            QueryAggregate(name: "last", kind: .max(FieldPath("meta.day"))),
            QueryAggregate(name: "n", kind: .count),
            QueryAggregate(name: "total", kind: .sum(FieldPath("minutes"))),
        ])
        #expect(group.aggregates.map(\.kind.text) == ["avg:minutes", "min:day", "max:$key", "max:meta.day", "count", "sum:minutes"])
        // Aggregates may be left out.
        let bare = try QuerySpec(parsing: #"{"collection": "logs", "group": {"by": ["habit"]}}"#)
        #expect(bare.group == QueryGroup(by: [FieldPath("habit")]))
    }

    @Test func minimalSpecsAndRanges() throws {
        let bare = try QuerySpec(parsing: #"{"collection": "c"}"#)
        #expect(bare == (try QuerySpec(collection: "c")))
        #expect(bare.range == nil && bare.predicate == nil && bare.group == nil && bare.limit == nil)
        #expect(try QuerySpec(parsing: #"{"collection": "c", "range": {"from": "b"}}"#).range == .between(from: "b", to: nil))
        #expect(try QuerySpec(parsing: #"{"collection": "c", "range": {"to": "b"}}"#).range == .between(from: nil, to: "b"))
        #expect(try QuerySpec(parsing: #"{"collection": "c", "order": []}"#).order.isEmpty)
        #expect(try QuerySpec(parsing: #"{"collection": "c", "limit": 1}"#).limit == 1)
        #expect(try QuerySpec(parsing: #"{"collection": "c", "limit": 2.0}"#).limit == 2)
        #expect(try QuerySpec(parsing: #"{"collection": "c", "where": {"field": "x", "eq": null}}"#).predicate
            == .compare(FieldPath("x"), .eq, .null))
        #expect(try QuerySpec(parsing: #"{"collection": "c", "where": {"and": []}}"#).predicate == .and([]))
        #expect(try QuerySpec(parsing: #"{"collection": "c", "where": {"status": "pending"}}"#).predicate == .status(.pending))
    }

    /// `text` is refused as `.invalid`, with a message that quotes `member`.
    func expectInvalid(_ text: String, naming member: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let spec = try QuerySpec(parsing: text)
            Issue.record("accepted \(text) as \(spec)", sourceLocation: sourceLocation)
        } catch {
            guard case .invalid(let message) = error else {
                Issue.record("\(text): \(error), not .invalid", sourceLocation: sourceLocation)
                return
            }
            #expect(message.hasPrefix("query spec: "), "\(message)", sourceLocation: sourceLocation)
            #expect(message.contains("\"\(member)\""), "\(text): \(message)", sourceLocation: sourceLocation)
        }
    }

    @Test func invalidTopLevel() {
        expectInvalid(#"{}"#, naming: "collection")
        expectInvalid(#"{"range": {"prefix": "a"}}"#, naming: "collection")
        expectInvalid(#"{"collection": 1}"#, naming: "collection")
        expectInvalid(#"{"collection": "c", "sort": []}"#, naming: "sort")
        expectInvalid(#"{"collection": "c", "limit": 0}"#, naming: "limit")
        expectInvalid(#"{"collection": "c", "limit": -1}"#, naming: "limit")
        expectInvalid(#"{"collection": "c", "limit": 1.5}"#, naming: "limit")
        expectInvalid(#"{"collection": "c", "limit": "3"}"#, naming: "limit")
        expectInvalid(#"{"collection": "c", "limit": null}"#, naming: "limit")
        expectInvalid(#"{"collection": "c", "limit": 1e300}"#, naming: "limit")
        expectInvalid(#"{"collection": "c", "where": []}"#, naming: "where")
        expectInvalid(#"{"collection": "c", "where": {}}"#, naming: "where")
        expectInvalid(#"{"collection": "c", "order": {"field": "a"}}"#, naming: "order")
        expectInvalid(#"{"collection": "c", "range": "a"}"#, naming: "range")
        expectInvalid(#"{"collection": "c", "group": ["a"]}"#, naming: "group")
        expectInvalid(#"{"collection": "c", "order": [{"field": "a"}], "group": {"by": ["a"]}}"#, naming: "order")
        expectInvalid(#"{"collection": "c", "order": [], "group": {"by": ["a"]}}"#, naming: "order")
        // Not JSON, or not an object.
        for text in ["", "{", "[]", "\"logs\"", #"{"collection": "c",}"#] {
            #expect(throws: OptimistError.self, "\(text)") { try QuerySpec(parsing: text) }
            do { _ = try QuerySpec(parsing: text) } catch { #expect(error.message.hasPrefix("query spec: ")) }
        }
    }

    @Test func invalidRange() {
        expectInvalid(#"{"collection": "c", "range": {"prefix": "a", "from": "b"}}"#, naming: "from")
        expectInvalid(#"{"collection": "c", "range": {"prefix": "a", "to": "b"}}"#, naming: "to")
        expectInvalid(#"{"collection": "c", "range": {"from": 1}}"#, naming: "from")
        expectInvalid(#"{"collection": "c", "range": {"to": null}}"#, naming: "to")
        expectInvalid(#"{"collection": "c", "range": {"prefix": ["a"]}}"#, naming: "prefix")
        expectInvalid(#"{"collection": "c", "range": {"from": "a", "until": "b"}}"#, naming: "until")
        expectInvalid(#"{"collection": "c", "range": {}}"#, naming: "range")
    }

    @Test func invalidWhere() {
        func w(_ p: String) -> String { #"{"collection": "c", "where": "# + p + "}" }
        expectInvalid(w(#"{"field": "a", "eq": 1, "bogus": 2}"#), naming: "bogus")
        expectInvalid(w(#"{"field": "a", "like": "x"}"#), naming: "like")
        expectInvalid(w(#"{"field": "a"}"#), naming: "field")
        expectInvalid(w(#"{"field": 3, "eq": 1}"#), naming: "field")
        expectInvalid(w(#"{"field": "a..b", "eq": 1}"#), naming: "field")
        expectInvalid(w(#"{"field": "a", "eq": 1, "ne": 2}"#), naming: "ne")
        expectInvalid(w(#"{"field": "a", "in": 1}"#), naming: "in")
        expectInvalid(w(#"{"field": "a", "prefix": 1}"#), naming: "prefix")
        expectInvalid(w(#"{"field": "a", "exists": "yes"}"#), naming: "exists")
        expectInvalid(w(#"{"and": {"field": "a", "eq": 1}}"#), naming: "and")
        expectInvalid(w(#"{"or": [{"field": "a", "eq": 1}, 7]}"#), naming: "or")
        expectInvalid(w(#"{"and": [{"field": "a", "eq": 1, "desc": true}]}"#), naming: "desc")
        expectInvalid(w(#"{"not": {"status": "done"}}"#), naming: "status")
        expectInvalid(w(#"{"not": [{"status": "failed"}]}"#), naming: "not")
        expectInvalid(w(#"{"status": "Failed"}"#), naming: "status")
        expectInvalid(w(#"{"status": 2}"#), naming: "status")
        expectInvalid(w(#"{"status": "failed", "not": {"status": "pending"}}"#), naming: "status")
        expectInvalid(w(#"{"status": "failed", "zzz": 1}"#), naming: "zzz")
        expectInvalid(w(#"{"nand": []}"#), naming: "nand")
        expectInvalid(w(#"{"eq": 1}"#), naming: "eq")
    }

    @Test func invalidOrder() {
        func o(_ items: String) -> String { #"{"collection": "c", "order": "# + items + "}" }
        expectInvalid(o(#"[{"field": "a", "desc": "yes"}]"#), naming: "desc")
        expectInvalid(o(#"[{"field": "a", "desc": 1}]"#), naming: "desc")
        expectInvalid(o(#"[{"field": "a", "dir": "desc"}]"#), naming: "dir")
        expectInvalid(o(#"[{"desc": true}]"#), naming: "field")
        expectInvalid(o(#"[{"field": ""}]"#), naming: "field")
        expectInvalid(o(#"[{"field": []}]"#), naming: "field")
        expectInvalid(o(#"["a"]"#), naming: "order")
    }

    @Test func invalidGroup() {
        func g(_ group: String) -> String { #"{"collection": "c", "group": "# + group + "}" }
        expectInvalid(g(#"{"by": []}"#), naming: "by")
        expectInvalid(g(#"{}"#), naming: "by")
        expectInvalid(g(#"{"by": "habit"}"#), naming: "by")
        expectInvalid(g(#"{"by": [1]}"#), naming: "by")
        expectInvalid(g(#"{"by": ["a", "a"]}"#), naming: "by")
        expectInvalid(g(#"{"by": ["a"], "having": {}}"#), naming: "having")
        expectInvalid(g(#"{"by": ["a"], "aggregates": ["count"]}"#), naming: "aggregates")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": "median:x"}}"#), naming: "m")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": "sum"}}"#), naming: "m")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": "sum:"}}"#), naming: "m")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": "count:x"}}"#), naming: "m")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": "sum:a..b"}}"#), naming: "m")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": 1}}"#), naming: "m")
        expectInvalid(g(#"{"by": ["a"], "aggregates": {"m": "COUNT"}}"#), naming: "m")
    }

    @Test func swiftInitValidates() throws {
        #expect(throws: OptimistError.self) { try QuerySpec(collection: "c", limit: 0) }
        #expect(throws: OptimistError.self) { try QuerySpec(collection: "c", group: QueryGroup(by: [])) }
        #expect(throws: OptimistError.self) {
            try QuerySpec(collection: "c", order: [QueryOrderItem(field: FieldPath("a"))], group: QueryGroup(by: [FieldPath("a")]))
        }
        #expect(throws: OptimistError.self) {
            try QuerySpec(collection: "c", group: QueryGroup(by: [FieldPath("a")], aggregates: [
                QueryAggregate(name: "n", kind: .count), QueryAggregate(name: "n", kind: .sum(FieldPath("x")))]))
        }
        var group = QueryGroup(by: [FieldPath("a")])
        group.aggregates = [QueryAggregate(name: "z", kind: .count), QueryAggregate(name: "a", kind: .count)]
        let spec = try QuerySpec(collection: "c", group: group)
        #expect(spec.group?.aggregates.map(\.name) == ["a", "z"])  // sorted by name
        do {
            _ = try QuerySpec(collection: "c", limit: -1)
        } catch {
            #expect(error == .invalid(#"query spec: "limit" must be an integer of at least 1"#))
        }
    }
}

@Suite struct QuerySpecJSONTests {
    @Test func specsRoundTripThroughJSON() throws {
        let texts = [
            #"{"collection": "c"}"#,
            #"{"collection": "logs", "range": {"prefix": "2026-11-"}, "limit": 5, "order": [{"field": "day", "desc": true}, {"field": ["a.b", "c"]}]}"#,
            #"{"collection": "logs", "range": {"from": "a"}, "where": {"or": [{"field": "x", "in": [1, null]}, {"not": {"status": "failed"}}, {"and": []}]}}"#,
            #"{"collection": "logs", "range": {"to": "z"}, "where": {"field": ["$key"], "exists": false}}"#,
            #"{"collection": "logs", "range": {"from": "a", "to": "b"}, "where": {"field": "$key", "prefix": "x"}, "group": {"by": ["h", [""]], "aggregates": {"n": "count", "s": "sum:m.x"}}}"#,
            #"{"collection": "logs", "where": {"field": "a", "ge": {"k": [1]}}, "group": {"by": ["h"]}}"#,
        ]
        for text in texts {
            let spec = try QuerySpec(parsing: text)
            let again = try QuerySpec(parsing: JSONWriter.string(spec.json))
            #expect(again == spec, "\(text) → \(spec.json)")
        }
        #expect(JSONWriter.string(try QuerySpec(parsing: #"{"collection": "c", "order": [{"field": "a", "desc": false}]}"#).json)
            == #"{"collection":"c","order":[{"field":"a"}]}"#)
    }
}
