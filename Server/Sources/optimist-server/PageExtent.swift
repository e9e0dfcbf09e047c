/// The bounds of one pull page: at most `count` changes and `bytes` of them as JSON text.
struct PageBounds: Sendable {
    var count: Int
    var bytes: Int64
}

/// What a page holds so far (a protocol 2 page fills from several spaces in turn).
struct PageUsage: Sendable {
    var count = 0
    var bytes: Int64 = 0
}

/// How far one pull page reaches: the seqs after the cursor up to `through`, and whether more
/// follow. A page holds whole mutations only (one mutation's records share a seq), so a client
/// never holds half of a mutation's effect; a mutation larger than the bounds by itself
/// travels alone in its page.
///
/// Decided from the per-seq sizes the database keeps (``StoreTransaction/changeGroups``), read
/// in bounded chunks and no further than the bounds: the values themselves are read once, for
/// the page alone, so a pull's memory is one page whatever the space holds.
struct PageExtent {
    var through: Int64
    var more: Bool

    /// The most seqs read in one chunk.
    static let chunk = 512

    /// The extent of one space's changes after `after` that still fit beside `used`, which it
    /// grows by what it takes.
    static func find(_ tx: any StoreTransaction, _ space: SpaceID, after: Int64, bounds: PageBounds,
                     used: inout PageUsage) async throws -> PageExtent {
        var extent = PageExtent(through: after, more: false)
        var count = used.count
        var bytes = used.bytes
        defer { used = PageUsage(count: count, bytes: bytes) }
        var position = after
        while true {
            // Each seq has one record at least: no more of them can fit than records can.
            let limit = max(1, min(bounds.count - count + 1, chunk))
            let groups = try await tx.changeGroups(space, after: position, limit: limit)
            for g in groups {
                let fits = count + g.count <= bounds.count && bytes + g.bytes <= bounds.bytes
                guard fits || count == 0 else {
                    extent.more = true
                    return extent
                }
                count += g.count
                bytes += g.bytes
                extent.through = g.seq
            }
            guard groups.count == limit, let last = groups.last else { return extent }
            position = last.seq
        }
    }
}
