import Testing
@testable import OptimistCore
@testable import OptimistModel

@Suite struct QueryPredicateTests {
    let r = queryRecord(#"{"n":5,"f":1.5,"s":"run","t":true,"z":null,"arr":[1,2],"obj":{"a":1},"meta":{"tag":"x"}}"#)

    func m(_ p: QueryPredicate, status: RecordStatus = .confirmed, key: Key = "2026-11-22/run") -> Bool {
        p.matches(r, key: key, status: status)
    }
    func cmp(_ field: String, _ op: QueryPredicate.Comparison, _ v: JSON) -> QueryPredicate { .compare(FieldPath(field), op, v) }

    @Test func equalityUsesJSONEquality() {
        #expect(m(cmp("n", .eq, 5.0)))
        #expect(m(cmp("n", .eq, 5)))
        #expect(!m(cmp("n", .eq, "5")))
        #expect(m(cmp("n", .ne, "5")))
        #expect(m(cmp("z", .eq, .null)))
        #expect(!m(cmp("z", .ne, .null)))
        #expect(m(cmp("arr", .eq, [1.0, 2])))
        #expect(m(cmp("obj", .eq, ["a": 1.0])))
        #expect(!m(cmp("obj", .eq, ["a": 1, "b": 2])))
        #expect(m(cmp("meta.tag", .eq, "x")))
        #expect(m(cmp("$key", .eq, "2026-11-22/run")))
    }

    @Test func orderingOnlyWithinOneKind() {
        #expect(m(cmp("n", .lt, 6)) && m(cmp("n", .le, 5)) && m(cmp("n", .ge, 5)) && m(cmp("n", .gt, 4.5)))
        #expect(!m(cmp("n", .lt, 5)) && !m(cmp("n", .gt, 5)))
        #expect(m(cmp("s", .gt, "rua")) && m(cmp("s", .lt, "s")) && m(cmp("s", .ge, "run")))
        #expect(m(cmp("t", .gt, false)) && m(cmp("t", .le, true)) && !m(cmp("t", .lt, true)))
        // Mixed kinds, null, arrays, objects: every ordering test is false, both ways.
        for op: QueryPredicate.Comparison in [.lt, .le, .gt, .ge] {
            #expect(!m(cmp("n", op, "5")), "number \(op) string")
            #expect(!m(cmp("s", op, 1)), "string \(op) number")
            #expect(!m(cmp("t", op, 1)), "bool \(op) number")
            #expect(!m(cmp("n", op, .null)), "number \(op) null")
            #expect(!m(cmp("z", op, .null)), "null \(op) null")
            #expect(!m(cmp("z", op, 0)), "null \(op) number")
            #expect(!m(cmp("arr", op, [1, 2])), "array \(op) array")
            #expect(!m(cmp("obj", op, ["a": 1])), "object \(op) object")
            #expect(!m(cmp("missing", op, 0)), "missing \(op)")
        }
        #expect(m(cmp("$key", .ge, "2026-11-22")) && m(cmp("$key", .lt, "2026-11-23")))
    }

    @Test func missingFieldFailsAllButNeAndExistsFalse() {
        for op in QueryPredicate.Comparison.allCases {
            #expect(m(cmp("missing", op, .null)) == (op == .ne), "\(op) on a missing field")
            #expect(m(cmp("meta.missing", op, 1)) == (op == .ne), "\(op) on a missing nested field")
        }
        #expect(!m(.isIn(FieldPath("missing"), [.null])))
        #expect(!m(.prefix(FieldPath("missing"), "")))
        #expect(!m(.exists(FieldPath("missing"), true)))
        #expect(m(.exists(FieldPath("missing"), false)))
        // `not` inverts whatever the inner test says, missing fields included.
        #expect(m(.not(cmp("missing", .eq, 1))))
        #expect(!m(.not(cmp("missing", .ne, 1))))
        #expect(m(.not(.prefix(FieldPath("missing"), "x"))))
        #expect(m(.not(cmp("missing", .lt, 1))))
    }

    @Test func inList() {
        #expect(m(.isIn(FieldPath("n"), [1, 5.0, "x"])))
        #expect(!m(.isIn(FieldPath("n"), ["5", .null])))
        #expect(m(.isIn(FieldPath("z"), [.null])))
        #expect(m(.isIn(FieldPath("arr"), [[1, 2.0]])))
        #expect(!m(.isIn(FieldPath("s"), [])))
    }

    @Test func prefixOnlyOnStrings() {
        #expect(m(.prefix(FieldPath("s"), "ru")))
        #expect(m(.prefix(FieldPath("s"), "")))
        #expect(m(.prefix(FieldPath("s"), "run")))
        #expect(!m(.prefix(FieldPath("s"), "runs")))
        #expect(!m(.prefix(FieldPath("s"), "R")))
        #expect(!m(.prefix(FieldPath("n"), "5")))
        #expect(!m(.prefix(FieldPath("z"), "")))
        #expect(!m(.prefix(FieldPath("arr"), "")))
        #expect(m(.prefix(FieldPath("$key"), "2026-11-")))
    }

    @Test func existsSeesNullAsPresent() {
        #expect(m(.exists(FieldPath("z"), true)))
        #expect(!m(.exists(FieldPath("z"), false)))
        #expect(m(.exists(FieldPath("meta.tag"), true)))
        #expect(m(.exists(FieldPath("s.x"), false)))
        #expect(m(.exists(FieldPath("$key"), true)))
    }

    @Test func andOrNot() {
        let yes = cmp("n", .eq, 5), no = cmp("n", .eq, 6)
        #expect(m(.and([yes, yes])) && !m(.and([yes, no])) && m(.and([])))
        #expect(m(.or([no, yes])) && !m(.or([no, no])) && !m(.or([])))
        #expect(m(.not(no)) && !m(.not(yes)) && m(.not(.not(yes))))
    }

    @Test func status() {
        for s in RecordStatus.allCases {
            for wanted in RecordStatus.allCases {
                #expect(m(.status(wanted), status: s) == (s == wanted))
            }
        }
        #expect(m(.not(.status(.failed)), status: .pending))
    }

    @Test func readsStatus() {
        #expect(!cmp("n", .eq, 1).readsStatus)
        #expect(QueryPredicate.status(.failed).readsStatus)
        #expect(QueryPredicate.and([cmp("n", .eq, 1), .or([.not(.status(.pending))])]).readsStatus)
        #expect(!QueryPredicate.or([.exists(FieldPath("a"), true), .prefix(FieldPath("b"), "x")]).readsStatus)
    }
}
