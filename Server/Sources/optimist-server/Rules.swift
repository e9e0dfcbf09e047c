import OptimistModel

/// `--refuse` rules: a way to make a real server rejection on demand (for demos and tests of
/// a client's rejection path). `COLL` matches every key of a collection, `COLL/PREFIX` the keys
/// that start with PREFIX (bytewise), and `=message` after either sets the error text.
struct RefusalRule: Sendable {
    let coll: Key
    /// nil: the whole collection.
    let prefix: Key?
    /// What the rejection says after "refused by rule: ": the message, or the rule itself.
    let message: String

    init(parsing text: String) throws(BadRequest) {
        var rule = Substring(text)
        var message: String?
        if let eq = rule.firstIndex(of: "=") {
            message = String(rule[rule.index(after: eq)...])
            rule = rule[..<eq]
        }
        if let slash = rule.firstIndex(of: "/") {
            coll = Key(String(rule[..<slash]))
            prefix = Key(String(rule[rule.index(after: slash)...]))
        } else {
            coll = Key(String(rule))
            prefix = nil
        }
        guard !coll.string.isEmpty else { throw BadRequest("refusal rule '\(text)' names no collection") }
        self.message = message.flatMap { $0.isEmpty ? nil : $0 } ?? String(rule)
    }

    func matches(_ op: Op) -> Bool {
        op.collection == coll && (prefix.map { op.key.hasBytePrefix($0) } ?? true)
    }
}

struct RefusalRules: Sendable {
    let rules: [RefusalRule]

    /// The message of the first rule that matches any op of a mutation, nil when none does.
    func refusal(for ops: [Op]) -> String? {
        for rule in rules where ops.contains(where: rule.matches) { return rule.message }
        return nil
    }
}
