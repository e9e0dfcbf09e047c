import OptimistCore
import OptimistModel

/// How ended mutations are stored: two bits per id, in chunks of 4,096 ids (1 KB blobs), one
/// row per chunk in `ended_chunks(chunk, bits)` with `chunk = id >> 12`.
///
/// Ids are dense and increasing, so a tap (mutate, roll back) rewrites the chunk a writer
/// batch just wrote instead of inserting a B-tree row per mutation, and 100,000 ended
/// mutations take 25 rows instead of 100,000.
///
/// Id `id` sits in byte `(id & 4095) >> 2` of its chunk, at bit `2 * (id & 3)`. Codes: 0 not
/// ended (or never used), 1 committed, 2 rolled back; 3 is invalid (a damaged file).
package enum EndedChunks {
    static let shift: UInt64 = 12
    static let idsPerChunk = 1 << shift
    static let bytesPerChunk = idsPerChunk / 4
    /// The highest chunk number a store writes: the one holding the largest id it hands out.
    static let maxChunk = Int64(largestMutationID >> shift)

    static func chunk(of id: MutationID) -> Int64 { Int64(id >> shift) }

    /// The 2-bit code of an ended status. The engine never ends a mutation with a live status;
    /// were it to, the id would read back as not ended rather than stop the writer thread.
    static func code(_ status: MutationStatus) -> UInt8 {
        switch status {
        case .committed: 1
        case .rolledBack: 2
        case .pending, .inflight, .failed: 0
        }
    }

    static func status(_ code: UInt8) -> MutationStatus? {
        switch code {
        case 1: .committed
        case 2: .rolledBack
        default: nil
        }
    }

    /// Sets `id`'s code in its chunk's bytes (`bits.count == bytesPerChunk`).
    static func set(_ bits: inout [UInt8], _ id: MutationID, _ status: MutationStatus) {
        let offset = Int(id & UInt64(idsPerChunk - 1))
        let shift = UInt8((offset & 3) * 2)
        bits[offset >> 2] = bits[offset >> 2] & ~(3 << shift) | code(status) << shift
    }

    /// The stored chunks, in chunk (and so id) order; ``decode(row:into:)`` reads a row.
    package static let query = "SELECT chunk, bits FROM ended_chunks ORDER BY chunk"

    /// Why a stored chunk does not decode: it is not a chunk this layout writes.
    package enum Fault: Error {
        case notABlob(chunk: Int64)
        /// A negative chunk number, or one past ``maxChunk``.
        case outOfRange(chunk: Int64)
        case wrongLength(chunk: Int64, bytes: Int)
        /// Code 3 at `id`.
        case invalidCode(chunk: Int64, id: MutationID)

        /// What the library says (`CORRUPT`) when it opens such a file.
        package var message: String {
            switch self {
            case .notABlob(let chunk): "ended chunk \(chunk) is not a blob"
            case .outOfRange(let chunk): "ended chunk \(chunk) is out of range"
            case .wrongLength(let chunk, let bytes): "ended chunk \(chunk) has \(bytes) bytes, not \(bytesPerChunk)"
            case .invalidCode(_, let id): "ended mutation \(id) has an invalid code (3)"
            }
        }
    }

    /// Appends every ended id of the chunk in `row` (a row of ``query``), in id order.
    package static func decode(row: Statement, into out: inout [EndedMutation]) throws(Fault) {
        let chunk = row.int64(0)
        guard row.isBlob(1) else { throw .notABlob(chunk: chunk) }
        try row.withBlob(1) { (bits) throws(Fault) in try decode(chunk: chunk, bits, into: &out) }
    }

    /// Appends every ended id of one stored chunk, in id order.
    static func decode(chunk: Int64, _ bits: UnsafeBufferPointer<UInt8>,
                       into out: inout [EndedMutation]) throws(Fault) {
        guard chunk >= 0, chunk <= maxChunk else { throw .outOfRange(chunk: chunk) }
        guard bits.count == bytesPerChunk else { throw .wrongLength(chunk: chunk, bytes: bits.count) }
        let base = UInt64(chunk) << shift
        for (i, byte) in bits.enumerated() where byte != 0 {
            for slot in 0..<4 {
                let code = (byte >> UInt8(slot * 2)) & 3
                if code == 0 { continue }
                let id = base | UInt64(i * 4 + slot)
                guard let status = status(code) else { throw .invalidCode(chunk: chunk, id: id) }
                out.append(EndedMutation(id: id, status: status))
            }
        }
    }
}
