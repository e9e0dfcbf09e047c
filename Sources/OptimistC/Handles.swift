import OptimistCore
import OptimistModel
import Synchronization

// The opaque handles C sees. Each `optimist_store*` / `optimist_batch*` points to a small
// header we lay out ourselves: a magic word, then a retained reference to a Swift box.
//
// Why a header and not the Swift object itself: the magic word sits at a known offset, so a
// batch passed where a store is expected (or a freed batch whose memory was not reused) is
// caught as MISUSE instead of being read as the wrong class.
//
// Why store handles are never freed: `optimist_close` closes the store (which drops its records
// and releases its file) but leaves the header and the emptied store behind as a tombstone, so
// any later call with the same pointer reads "closed" and returns MISUSE rather than touching
// freed memory. The cost is a fixed amount per store opened in the life of the process ("HANDLES"
// in Include/optimist.h says how much), most of it the read cache's 64 empty shards and their
// locks, which allocate no table while empty (Benchmarks/C/tombstones.c measures it: RSS over
// 5,000 opens and closes).

private let storeMagic: UInt64 = 0x4F50_5453_544F_5245  // "OPTSTORE"
private let batchMagic: UInt64 = 0x4F50_5442_4154_4348  // "OPTBATCH"
private let deadMagic: UInt64 = 0x4F50_5444_4541_4421   // "OPTDEAD!"
private let queryMagic: UInt64 = 0x4F50_5451_5545_5259  // "OPTQUERY"
private let closedQueryMagic: UInt64 = 0x4F50_5451_434C_4F53  // "OPTQCLOS"
private let headerSize = 16

/// What a batch handle points at: the ops added so far. A batch is not locked: it may be read
/// by several calls at once but must not be changed while another thread uses it.
final class BatchBox {
    var ops: [Op] = []
    /// The ops' sizes as the adders measured them: a mutate of the batch checks `Limits`
    /// exactly only when this cannot tell that they are within.
    var tally = Limits.Tally()
}

private func makeHandle(magic: UInt64, _ object: AnyObject) -> OpaquePointer {
    let raw = UnsafeMutableRawPointer.allocate(byteCount: headerSize, alignment: 8)
    raw.storeBytes(of: magic, as: UInt64.self)
    raw.storeBytes(of: Unmanaged.passRetained(object).toOpaque(), toByteOffset: 8, as: UnsafeMutableRawPointer.self)
    return OpaquePointer(raw)
}

/// The object behind a handle whose header carries `magic`. Each magic word is only ever
/// written with objects of one class, so the word is the type check (no dynamic cast per call).
private func object<T: AnyObject>(_ handle: OpaquePointer, magic: UInt64, as: T.Type) -> T? {
    unmanaged(handle, magic: magic, as: T.self)?.takeUnretainedValue()
}

/// The same, not retained.
@inline(__always)
private func unmanaged<T: AnyObject>(_ handle: OpaquePointer, magic: UInt64, as: T.Type) -> Unmanaged<T>? {
    let raw = UnsafeMutableRawPointer(handle)
    guard raw.load(as: UInt64.self) == magic else { return nil }
    return Unmanaged<T>.fromOpaque(raw.load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self))
}

/// Every store and query handle ever made, by address. Tombstones are meant to live as long
/// as the process; keeping them listed says so to leak checkers (valgrind reports them as
/// reachable rather than lost), so a memcheck run of a host stays clean.
private let tombstonedHandles = Mutex<[UInt]>([])

/// A handle that is never freed (its header stays as a tombstone), listed as such.
private func makeTombstonedHandle(magic: UInt64, _ object: AnyObject) -> OpaquePointer {
    let handle = makeHandle(magic: magic, object)
    tombstonedHandles.withLock { $0.append(UInt(bitPattern: UnsafeMutableRawPointer(handle))) }
    return handle
}

func makeStoreHandle(_ store: Store) -> OpaquePointer { makeTombstonedHandle(magic: storeMagic, store) }

/// The store behind a handle, open or closed. NULL or not a store handle: `.misuse`.
func anyStore(_ handle: OpaquePointer?) throws(OptimistError) -> Store {
    guard let handle else { throw .misuse("the store handle is NULL") }
    guard let s = object(handle, magic: storeMagic, as: Store.self) else { throw .misuse("not a store handle") }
    return s
}

/// Runs `body` with the open store behind a handle: NULL, not a store, or closed: `.misuse`.
/// (A store closed by another thread after this check still refuses the call: the store
/// checks under its lock.)
///
/// The store is borrowed, not retained: its handle is never freed and keeps it retained for
/// the life of the process (the tombstones above). Taking a reference of its own cost every
/// call a retain and a release, and the callee more of them, on every call of the hot path
/// (`optimist_put_fields`, `optimist_view_get`).
@inline(__always)
func withStore<R>(_ handle: OpaquePointer?, _ body: (Store) throws(OptimistError) -> R) throws(OptimistError) -> R {
    guard let handle else { throw .misuse("the store handle is NULL") }
    guard let ref = unmanaged(handle, magic: storeMagic, as: Store.self) else { throw .misuse("not a store handle") }
    return try ref.borrowing { s throws(OptimistError) -> R in
        guard !s.isClosed else { throw .misuse("the store is closed") }
        return try body(s)
    }
}

func makeBatchHandle() -> OpaquePointer {
    makeHandle(magic: batchMagic, BatchBox())
}

/// The box behind a batch handle. NULL or not a (live) batch handle: `.misuse`.
func batchBox(_ handle: OpaquePointer?) throws(OptimistError) -> BatchBox {
    guard let handle else { throw .misuse("the batch handle is NULL") }
    guard let box = object(handle, magic: batchMagic, as: BatchBox.self) else {
        throw .misuse("not a batch handle (or a freed one)")
    }
    return box
}

/// Frees a batch handle: marks the header dead first, so a stale pointer whose memory has not
/// been reused yet is caught as MISUSE.
func freeBatchHandle(_ handle: OpaquePointer) {
    let raw = UnsafeMutableRawPointer(handle)
    guard raw.load(as: UInt64.self) == batchMagic else { return }
    raw.storeBytes(of: deadMagic, as: UInt64.self)
    Unmanaged<AnyObject>.fromOpaque(raw.load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)).release()
    raw.deallocate()
}

// Query handles: a closed query's header stays as a tombstone (16 bytes, its query released),
// so a call with it after `optimist_query_close` reads "closed" and returns MISUSE, as the
// header promises, instead of touching freed memory.

func makeQueryHandle(_ query: LiveQuery) -> OpaquePointer { makeTombstonedHandle(magic: queryMagic, query) }

/// The live query behind a handle. NULL, not a query handle, or a closed one: `.misuse`.
func liveQuery(_ handle: OpaquePointer?) throws(OptimistError) -> LiveQuery {
    guard let handle else { throw .misuse("the query handle is NULL") }
    if UnsafeMutableRawPointer(handle).load(as: UInt64.self) == closedQueryMagic { throw .misuse("the query is closed") }
    guard let q = object(handle, magic: queryMagic, as: LiveQuery.self) else { throw .misuse("not a query handle") }
    return q
}

/// Closes the query behind a handle and leaves the tombstone. Not a query handle: `.misuse`;
/// closed already: nothing to do.
func closeQueryHandle(_ handle: OpaquePointer) throws(OptimistError) {
    let raw = UnsafeMutableRawPointer(handle)
    let magic = raw.load(as: UInt64.self)
    if magic == closedQueryMagic { return }
    guard magic == queryMagic else { throw .misuse("not a query handle") }
    raw.storeBytes(of: closedQueryMagic, as: UInt64.self)
    let q = Unmanaged<LiveQuery>.fromOpaque(raw.load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self))
    q.takeUnretainedValue().close()
    q.release()
}
