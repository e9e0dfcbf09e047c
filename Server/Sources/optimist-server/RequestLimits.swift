/// The per-request caps of `/push` and `/pull`, beyond the body's byte limit: each bounds the
/// work and memory one request can ask for, and each is well above what the library sends
/// (SyncOptions.maxBatch and maxUnacked default to 100 and 1,000).
struct RequestLimits: Sendable {
    /// Most mutations in one push (`--max-push-mutations`); more: 413, so the client narrows
    /// its batch (the library halves it on 413).
    var maxPushMutations = 1_000
    /// Most ids in one pull's `unacked` (`--max-unacked`); more: 400.
    var maxUnacked = 10_000

    /// Whether a Content-Type header names JSON: `application/json`, any case, parameters such
    /// as `; charset=utf-8` allowed. A body sent as anything else (a form, text) is refused
    /// with 415 rather than parsed on a guess.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingCharacters(in: " \t").lowercased() == "application/json"
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return s
    }
}
