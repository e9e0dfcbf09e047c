/// A live query's numbered deliveries (``/OptimistCore/LiveQuery/subscribeNumbered(_:)``) put
/// back in the order of their calls: calls made on two threads at once deliver on their own
/// threads in either order, and each list of deltas applies to the rows its own call left.
/// Holds a delivery that came early until the ones before it have come. Used under its
/// owner's lock.
struct NumberedDeltas<Element> {
    /// The number of the last delivery applied; nil until the first rows are in.
    private var applied: UInt64?
    private var waiting: [UInt64: [(QueryDelta, Element?)]] = [:]

    /// The first rows are in, and they include every delivery up to `delivered`: applies the
    /// deliveries that came meanwhile and follow it.
    mutating func start(after delivered: UInt64, to rows: inout [Element]) {
        applied = delivered
        waiting = waiting.filter { $0.key > delivered }
        drain(&rows)
    }

    /// Takes delivery `number` (its deltas, each with its row as an element, nil for a
    /// delete) and applies, in order, every delivery now due. Returns whether any was.
    mutating func take(_ number: UInt64, _ deltas: [(QueryDelta, Element?)], to rows: inout [Element]) -> Bool {
        let before = applied
        waiting[number] = deltas
        drain(&rows)
        return applied != before
    }

    private mutating func drain(_ rows: inout [Element]) {
        guard var n = applied else { return }
        while let next = waiting.removeValue(forKey: n + 1) {
            for (d, e) in next {
                switch (d, e) {
                case (.insert(let at, _), let e?): if at >= 0 && at <= rows.count { rows.insert(e, at: at) }
                case (.update(let at, _), let e?): if at >= 0 && at < rows.count { rows[at] = e }
                case (.delete(let at), _): if at >= 0 && at < rows.count { rows.remove(at: at) }
                default: break
                }
            }
            n += 1
        }
        applied = n
    }
}
