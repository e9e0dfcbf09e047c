import OptimistModel

extension QuerySpec {
    /// Parses a query spec's JSON text (malformed JSON is `.invalid` too).
    public init(parsing text: String) throws(OptimistError) {
        let json: JSON
        do { json = try JSONParser.parse(text) } catch {
            throw .invalid("query spec: malformed JSON: \(error)")
        }
        try self.init(parsing: json)
    }

    /// Parses a query spec:
    /// `{"collection": C, "range": R, "where": P, "order": [...], "limit": N, "group": G}`,
    /// only `collection` required. A bad spec (missing `collection`, unknown member, wrong
    /// type, unknown status or aggregate, empty `by`, limit < 1, `order` with `group`) is
    /// `.invalid` with a message that names the offending member, the innermost one.
    public init(parsing json: JSON) throws(OptimistError) {
        guard case .object(let members) = json else { throw .invalid("query spec: must be a JSON object") }
        try Self.rejectUnknown(members, allowed: ["collection", "range", "where", "order", "limit", "group"], at: "")
        guard let collectionValue = members["collection"] else {
            throw QuerySpecError.invalid("collection", at: "", "is required")
        }
        guard case .string(let collection) = collectionValue else {
            throw QuerySpecError.invalid("collection", at: "", "must be a string")
        }
        let range = try members["range"].map { v throws(OptimistError) in try Self.parseRange(v) }
        let predicate = try members["where"].map { v throws(OptimistError) in try Self.parsePredicate(v, member: "where", at: "") }
        let order = try members["order"].map { v throws(OptimistError) in try Self.parseOrder(v) } ?? []
        var limit: Int?
        if let v = members["limit"] {
            guard case .number(let d) = v, let n = Int(exactly: d), n >= 1 else {
                throw QuerySpecError.invalid("limit", at: "", "must be an integer of at least 1")
            }
            limit = n
        }
        let group = try members["group"].map { v throws(OptimistError) in try Self.parseGroup(v) }
        if group != nil && members["order"] != nil {
            // Even an empty one: groups have their own order, and a spec that asks for
            // another is a mistake worth saying.
            throw QuerySpecError.invalid("order", at: "", "cannot be used with \"group\" (groups come in ascending order of \"by\")")
        }
        try self.init(collection: Key(collection), range: range, predicate: predicate, order: order, limit: limit, group: group)
    }

    /// The first member (bytewise, so the message does not depend on a dictionary's order)
    /// that is not one of `allowed`.
    static func rejectUnknown(_ members: [Key: JSON], allowed: Set<String>, at location: String) throws(OptimistError) {
        if let unknown = members.keys.filter({ !allowed.contains($0.string) }).min() {
            throw QuerySpecError.invalid(unknown.string, at: location, "is not a known member (expected \(allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", ")))")
        }
    }

    static func parseRange(_ json: JSON) throws(OptimistError) -> QueryRange {
        guard case .object(let m) = json else { throw QuerySpecError.invalid("range", at: "", "must be an object") }
        try rejectUnknown(m, allowed: ["prefix", "from", "to"], at: "range")
        func key(_ name: String) throws(OptimistError) -> Key? {
            guard let v = m[Key(name)] else { return nil }
            guard case .string(let s) = v else { throw QuerySpecError.invalid(name, at: "range", "must be a string") }
            return Key(s)
        }
        let prefix = try key("prefix"), from = try key("from"), to = try key("to")
        if let prefix {
            if from != nil { throw QuerySpecError.invalid("from", at: "range", "cannot be used with \"prefix\"") }
            if to != nil { throw QuerySpecError.invalid("to", at: "range", "cannot be used with \"prefix\"") }
            return .prefix(prefix)
        }
        guard from != nil || to != nil else {
            throw QuerySpecError.invalid("range", at: "", "must give \"prefix\", or \"from\", \"to\" or both")
        }
        return .between(from: from, to: to)
    }

    static let operators: Set<String> = ["eq", "ne", "lt", "le", "gt", "ge", "in", "prefix", "exists"]

    /// One predicate; `member` is the spec member holding it and `location` where that is,
    /// so nested errors say which `and` element they are in.
    static func parsePredicate(_ json: JSON, member: String, at location: String) throws(OptimistError) -> QueryPredicate {
        guard case .object(let m) = json else { throw QuerySpecError.invalid(member, at: location, "must be a predicate object") }
        let here = location.isEmpty ? member : location + "." + member
        if let fieldValue = m["field"] {
            try rejectUnknown(m, allowed: operators.union(["field"]), at: here)
            let path = try FieldPath(parsing: fieldValue, member: "field", at: here)
            let ops = m.keys.filter { operators.contains($0.string) }.sorted()
            guard let op = ops.first else {
                throw QuerySpecError.invalid("field", at: here, "needs one operator: \"eq\", \"ne\", \"lt\", \"le\", \"gt\", \"ge\", \"in\", \"prefix\" or \"exists\"")
            }
            if ops.count > 1 { throw QuerySpecError.invalid(ops[1].string, at: here, "cannot be used with \"\(op.string)\" (one operator per predicate)") }
            let operand = m[op]!
            switch op.string {
            case "in":
                guard case .array(let values) = operand else { throw QuerySpecError.invalid("in", at: here, "must be an array of values") }
                return .isIn(path, values)
            case "prefix":
                guard case .string(let p) = operand else { throw QuerySpecError.invalid("prefix", at: here, "must be a string") }
                return .prefix(path, p)
            case "exists":
                guard case .bool(let b) = operand else { throw QuerySpecError.invalid("exists", at: here, "must be true or false") }
                return .exists(path, b)
            default:
                return .compare(path, QueryPredicate.Comparison(rawValue: op.string)!, operand)
            }
        }
        guard m.count == 1, let (name, value) = m.first else {
            if m.isEmpty {
                throw QuerySpecError.invalid(member, at: location, "must be a predicate: {\"field\": ...}, \"and\", \"or\", \"not\" or \"status\"")
            }
            try rejectUnknown(m, allowed: ["and", "or", "not", "status"], at: here)
            let names = m.keys.sorted()
            throw QuerySpecError.invalid(names[1].string, at: here, "cannot be used with \"\(names[0].string)\" (one per predicate object)")
        }
        switch name.string {
        case "and", "or":
            guard case .array(let items) = value else { throw QuerySpecError.invalid(name.string, at: here, "must be an array of predicates") }
            var list: [QueryPredicate] = []
            list.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                list.append(try parsePredicate(item, member: "\(name.string)[\(i)]", at: here))
            }
            return name.string == "and" ? .and(list) : .or(list)
        case "not":
            return .not(try parsePredicate(value, member: "not", at: here))
        case "status":
            guard case .string(let s) = value, let status = RecordStatus.allCases.first(where: { $0.description == s }) else {
                throw QuerySpecError.invalid("status", at: here, "must be \"confirmed\", \"pending\" or \"failed\"")
            }
            return .status(status)
        default:
            throw QuerySpecError.invalid(name.string, at: here, "is not a predicate (expected \"field\", \"and\", \"or\", \"not\" or \"status\")")
        }
    }

    static func parseOrder(_ json: JSON) throws(OptimistError) -> [QueryOrderItem] {
        guard case .array(let items) = json else { throw QuerySpecError.invalid("order", at: "", "must be an array of {\"field\": F, \"desc\": true|false}") }
        var order: [QueryOrderItem] = []
        order.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            let here = "order[\(i)]"
            guard case .object(let m) = item else {
                throw QuerySpecError.invalid(here, at: "", "must be an object {\"field\": F, \"desc\": true|false}")
            }
            try rejectUnknown(m, allowed: ["field", "desc"], at: here)
            guard let f = m["field"] else { throw QuerySpecError.invalid("field", at: here, "is required") }
            let path = try FieldPath(parsing: f, member: "field", at: here)
            var descending = false
            if let d = m["desc"] {
                guard case .bool(let b) = d else { throw QuerySpecError.invalid("desc", at: here, "must be true or false") }
                descending = b
            }
            order.append(QueryOrderItem(field: path, descending: descending))
        }
        return order
    }

    static func parseGroup(_ json: JSON) throws(OptimistError) -> QueryGroup {
        guard case .object(let m) = json else { throw QuerySpecError.invalid("group", at: "", "must be an object") }
        try rejectUnknown(m, allowed: ["by", "aggregates"], at: "group")
        guard let byValue = m["by"] else { throw QuerySpecError.invalid("by", at: "group", "is required") }
        guard case .array(let byItems) = byValue else {
            throw QuerySpecError.invalid("by", at: "group", "must be an array of field paths")
        }
        guard !byItems.isEmpty else { throw QuerySpecError.invalid("by", at: "group", "must name at least one field") }
        var by: [FieldPath] = []
        for item in byItems { by.append(try FieldPath(parsing: item, member: "by", at: "group")) }
        var aggregates: [QueryAggregate] = []
        if let a = m["aggregates"] {
            guard case .object(let named) = a else {
                throw QuerySpecError.invalid("aggregates", at: "group", "must be an object of name: \"count\" | \"sum:<field>\" | ...")
            }
            for (name, value) in named.sorted(by: { $0.key < $1.key }) {
                guard case .string(let text) = value else {
                    throw QuerySpecError.invalid(name.string, at: "group.aggregates", "must be a string such as \"count\" or \"sum:<field>\"")
                }
                aggregates.append(QueryAggregate(name: name.string, kind: try QueryAggregateKind(parsing: text, member: name.string, at: "group.aggregates")))
            }
        }
        return QueryGroup(by: by, aggregates: aggregates)
    }
}
