import OptimistModel

extension FieldPath {
    /// The path as a spec writes it: dotted when that reads back as the same names, else the
    /// array form (a name with a dot, an empty name, a member called `$key`).
    public var json: JSON {
        if isKey { return "$key" }
        let plain = !names.isEmpty && names.allSatisfy { !$0.string.isEmpty && !$0.string.utf8.contains(UInt8(ascii: ".")) }
            && !(names.count == 1 && names[0].string == "$key")
        return plain ? .string(text) : .array(names.map { .string($0.string) })
    }
}

extension QueryPredicate {
    /// The predicate as a spec writes it.
    public var json: JSON {
        switch self {
        case .compare(let f, let op, let v): .object(["field": f.json, Key(op.rawValue): v])
        case .isIn(let f, let values): .object(["field": f.json, "in": .array(values)])
        case .prefix(let f, let p): .object(["field": f.json, "prefix": .string(p)])
        case .exists(let f, let b): .object(["field": f.json, "exists": .bool(b)])
        case .and(let list): .object(["and": .array(list.map(\.json))])
        case .or(let list): .object(["or": .array(list.map(\.json))])
        case .not(let inner): .object(["not": inner.json])
        case .status(let s): .object(["status": .string(s.description)])
        }
    }
}

extension QuerySpec {
    /// The spec as JSON that ``init(parsing:)-(JSON)`` reads back as an equal spec (members
    /// left at their defaults are left out), for logs, keys of shared queries and hosts that
    /// built it in Swift. An aggregate's field is written dotted, so one built in Swift over a
    /// name with a dot in it does not read back.
    public var json: JSON {
        var out: [Key: JSON] = ["collection": .string(collection.string)]
        switch range {
        case .prefix(let p)?: out["range"] = .object(["prefix": .string(p.string)])
        case .between(let from, let to)?:
            var r: [Key: JSON] = [:]
            if let from { r["from"] = .string(from.string) }
            if let to { r["to"] = .string(to.string) }
            out["range"] = .object(r)
        case nil: break
        }
        if let predicate { out["where"] = predicate.json }
        if !order.isEmpty {
            out["order"] = .array(order.map { item in
                item.descending ? .object(["field": item.field.json, "desc": true]) : .object(["field": item.field.json])
            })
        }
        if let limit { out["limit"] = .number(Double(limit)) }
        if let group {
            var g: [Key: JSON] = ["by": .array(group.by.map(\.json))]
            if !group.aggregates.isEmpty {
                var named: [Key: JSON] = [:]
                for a in group.aggregates { named[Key(a.name)] = .string(a.kind.text) }
                g["aggregates"] = .object(named)
            }
            out["group"] = .object(g)
        }
        return .object(out)
    }
}
