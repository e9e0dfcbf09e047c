import OptimistCore
import OptimistModel

extension SQLiteStoreFile {
    /// Opens a store file for reading while another process (or no one) has it open: a
    /// private copy of the file and its log (``StoreFileCopy``), taken without a lock, opened
    /// as a store of its own. The reader sees the file as it was when the copy was taken:
    /// everything the other process had flushed by then (its not-yet-ended mutations too, as
    /// the visible state), and nothing later (open again to see more). The other process never
    /// waits for it and its writes and flushes never fail because of it. The copy costs the
    /// file's size in time and temporary disk space, and is removed when the store closes.
    ///
    /// - Throws: `.misuse` for an empty path; `.io` when the file is missing or unreadable or
    ///   the copy cannot be written (set `TMPDIR` to a directory with room), or when it keeps
    ///   changing under the copy; `.corrupt` when it is not an Optimist store or is damaged.
    package static func openReadOnly(path: String, cacheBytes: Int = defaultCacheBytes)
        throws(OptimistError) -> (snapshot: StoreSnapshot, journal: any JournalSink, storage: any ConfirmedStorage) {
        guard !path.isEmpty else { throw .misuse("an empty store path") }
        let dir: String
        do throws(StoreFileCopy.Failure) {
            dir = try StoreFileCopy.makeDirectory(prefix: "optimist-reader")
        } catch {
            throw failure(error, path)
        }
        let copy = dir + "/store.db"
        do throws(OptimistError) {
            do throws(StoreFileCopy.Failure) { _ = try StoreFileCopy.take(path, into: dir) } catch {
                throw failure(error, path)
            }
            let (snapshot, journal, storage): (StoreSnapshot, SQLiteJournal, any ConfirmedStorage)
            do throws(OptimistError) { (snapshot, journal, storage) = try open(path: copy, cacheBytes: cacheBytes) } catch {
                throw error.naming(copy, as: path)
            }
            return (snapshot, CopyJournal(journal, directory: dir), storage)
        } catch {
            StoreFileCopy.remove(directory: dir)
            throw error
        }
    }

    private static func failure(_ f: StoreFileCopy.Failure, _ path: String) -> OptimistError {
        switch f {
        case .notAStore(let m): .corrupt("\(path) is not an Optimist store: \(m)")
        case .unreadable(let m): .io("\(path): cannot read it: \(m)")
        }
    }
}

extension OptimistError {
    /// The same error with `copy` in its message said as `original` (a reader's copy is an
    /// implementation detail; the caller named the original).
    func naming(_ copy: String, as original: String) -> OptimistError {
        func r(_ m: String) -> String { m.replacingAll(copy, with: original) }
        switch self {
        case .internal(let m): return .internal(r(m))
        case .misuse(let m): return .misuse(r(m))
        case .notFound(let m): return .notFound(r(m))
        case .state(let m): return .state(r(m))
        case .invalid(let m): return .invalid(r(m))
        case .duplicate: return self
        case .io(let m): return .io(r(m))
        case .corrupt(let m): return .corrupt(r(m))
        case .busy(let m): return .busy(r(m))
        }
    }
}

private extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        let t = Array(target.utf8), bytes = Array(utf8)
        guard !t.isEmpty, bytes.count >= t.count else { return self }
        var out = [UInt8]()
        var i = 0
        while i < bytes.count {
            if i + t.count <= bytes.count && bytes[i..<(i + t.count)].elementsEqual(t) {
                out += replacement.utf8
                i += t.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A reader's journal: its copy's, which removes the copy when the store closes.
final class CopyJournal: JournalSink, @unchecked Sendable {
    private let inner: SQLiteJournal
    private let directory: String

    init(_ inner: SQLiteJournal, directory: String) {
        self.inner = inner
        self.directory = directory
    }

    func append(_ entries: [JournalEntry], number: UInt64) { inner.append(entries, number: number) }
    func append(taking entries: inout [JournalEntry], number: UInt64) { inner.append(taking: &entries, number: number) }
    func flush() throws(OptimistError) { try inner.flush() }
    func takeError() -> OptimistError? { inner.takeError() }
    func close() throws(OptimistError) {
        defer { StoreFileCopy.remove(directory: directory) }
        try inner.close()
    }
}
