import OptimistModel
/// A range of stored rows with newer values for some of its keys laid over them: what a store
/// file's scan does with the records its writer has not written yet, and what the engine does
/// with a published ``ConfirmedLayer`` over the storage's rows.
///
/// `newer` are the overriding keys in byte order (those of the range, after `after`);
/// `value(key)` is the newer value (nil: deleted). `page(after, limit)` reads up to `limit`
/// stored rows after `after`, in order. Returns up to `limit` rows in key order; where both
/// have a key, the newer value (or its delete) wins. Reads pages until `limit` rows are out
/// or the stored rows end, so deletes in `newer` cannot make it return fewer than there are.
package func scanMerging<C: RandomAccessCollection>(
    _ newer: C, value: (Key) -> Record?, after: Key?, limit: Int,
    page: (_ after: Key?, _ limit: Int) throws(OptimistError) -> [(key: Key, value: Record)]
) throws(OptimistError) -> [(key: Key, value: Record)] where C.Element == Key {
    var p = newer.startIndex
    var out = [(key: Key, value: Record)]()
    var rows = [(key: Key, value: Record)]()
    var r = 0
    var storedAfter = after
    var storedDone = false
    while out.count < limit {
        if r == rows.count, !storedDone {
            rows = try page(storedAfter, limit)
            r = 0
            storedDone = rows.count < limit
            if let last = rows.last { storedAfter = last.key }
        }
        let sk = r < rows.count ? rows[r].key : nil
        let nk = p < newer.endIndex ? newer[p] : nil
        if let nk, sk == nil || !(sk! < nk) {
            if sk == nk { r += 1 }  // the stored, older value
            p = newer.index(after: p)
            if let v = value(nk) { out.append((nk, v)) }
        } else if sk != nil {
            out.append(rows[r])
            r += 1
        } else {
            break
        }
    }
    return out
}
