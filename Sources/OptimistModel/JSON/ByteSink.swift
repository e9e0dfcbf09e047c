#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where ``JSONWriter`` puts its bytes: a Swift array, or a ``MallocBytes`` buffer.
///
/// The writer is generic over its sink so one piece of code writes both. Inside this module
/// it is specialized for each sink, so an append is a few inlined instructions.
package protocol JSONByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeRawBufferPointer)
}

extension Array: JSONByteSink where Element == UInt8 {
    @inline(__always) package mutating func append(bytes: UnsafeRawBufferPointer) { append(contentsOf: bytes) }
}

/// A growable byte buffer in `malloc`'d memory, for JSON that leaves through the C ABI: the
/// buffer itself becomes the caller's string (freed with `optimist_free`, which is `free`),
/// where writing into a Swift array cost a uniqueness and capacity check per append and a
/// copy at the end.
///
/// Out of memory does not trap: the buffer stops growing, notes it, and the writer's caller
/// reports it (see ``takeCString()``).
package struct MallocBytes: JSONByteSink {
    private var base: UnsafeMutablePointer<UInt8>?
    private var count = 0
    private var capacity: Int

    /// A buffer with room for `capacity` bytes (and the NUL ``takeCString()`` adds).
    package init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = malloc(self.capacity + 1)?.assumingMemoryBound(to: UInt8.self)
        if base == nil { self.capacity = 0 }
    }

    @inline(__always) package mutating func append(_ byte: UInt8) {
        if count == capacity, !grow(to: count + 1) { return }
        base.unsafelyUnwrapped[count] = byte
        count += 1
    }

    @inline(__always) package mutating func append(bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        if count + n > capacity, !grow(to: count + n) { return }
        if n > 0 { UnsafeMutableRawPointer(base.unsafelyUnwrapped + count).copyMemory(from: bytes.baseAddress!, byteCount: n) }
        count += n
    }

    /// Room for `needed` bytes at least (doubling); false, and nothing more is written, when
    /// memory ran out.
    @inline(never) private mutating func grow(to needed: Int) -> Bool {
        guard let old = base else { return false }
        let size = max(needed, capacity * 2)
        guard let new = realloc(old, size + 1) else {
            free(old)
            base = nil
            capacity = 0
            count = 0
            return false
        }
        base = new.assumingMemoryBound(to: UInt8.self)
        capacity = size
        return true
    }

    /// The bytes as a NUL-terminated string the caller owns (and frees with `free`), nil when
    /// memory ran out on the way (nothing to free then). The buffer is spent afterwards.
    package mutating func takeCString() -> UnsafeMutablePointer<CChar>? {
        guard let b = base else { return nil }
        b[count] = 0  // the init and every growth keep one byte of room for it
        base = nil
        capacity = 0
        return UnsafeMutableRawPointer(b).assumingMemoryBound(to: CChar.self)
    }
}

/// The caller's buffer of `capacity` bytes, for JSON written into memory the caller owns
/// (`optimist_get_into`): no allocation. It counts every byte it is given and writes those
/// that fit with room for a NUL; once the text has outgrown the buffer, what the buffer holds
/// is of no use (the caller sees the count, and asks again with room for all of it).
package struct FixedBytes: JSONByteSink {
    private let base: UnsafeMutablePointer<UInt8>?
    /// The bytes that may be written: the capacity less one for the NUL.
    private let room: Int
    /// Every byte given so far, written or not: the text's length.
    package private(set) var count = 0

    package init(_ base: UnsafeMutablePointer<UInt8>?, capacity: Int) {
        self.base = base
        room = base == nil ? 0 : max(capacity - 1, 0)
    }

    /// Whether the whole text and its NUL fit.
    package var fits: Bool { base != nil && count <= room }

    @inline(__always) package mutating func append(_ byte: UInt8) {
        if count < room { base.unsafelyUnwrapped[count] = byte }
        count += 1
    }

    @inline(__always) package mutating func append(bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        if n > 0 && count + n <= room {
            UnsafeMutableRawPointer(base.unsafelyUnwrapped + count).copyMemory(from: bytes.baseAddress!, byteCount: n)
        }
        count += n
    }

    /// Appends to `out` what `write` writes, written first into a buffer on the stack and then
    /// copied in one append: an array as the sink checks its uniqueness and capacity on every
    /// byte, most of the cost of writing a record. What outgrows the buffer is written again
    /// by `unbuffered`, straight into `out` (the same writer, given the array as its sink).
    @inline(__always) package static func append(to out: inout [UInt8], _ write: (inout FixedBytes) -> Void,
                                                 unbuffered: (inout [UInt8]) -> Void) {
        let fitted = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buf -> Bool in
            var sink = FixedBytes(buf.baseAddress, capacity: buf.count)
            write(&sink)
            guard sink.fits else { return false }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[0..<sink.count]))
            return true
        }
        if !fitted { unbuffered(&out) }
    }

    /// Ends the text with a NUL when it fits; returns its length (without the NUL).
    package mutating func finish() -> Int {
        if fits { base.unsafelyUnwrapped[count] = 0 }
        return count
    }
}
