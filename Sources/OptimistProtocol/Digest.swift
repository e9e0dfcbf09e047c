import OptimistModel

/// The digest of a mutation's ops: what a server keeps of each mutation it processed, so that
/// a pair `(client_id, id)` sent again with other ops (a copied or restored store file reusing
/// ids) is refused instead of answered `ok` for writes it never made.
///
/// Computed over the canonical JSON text of the ops array (``Op/encode(_:)``: members sorted,
/// numbers written one way), so a client and a server that parsed and re-wrote the same ops
/// agree. Two independent 64-bit lanes (FNV-1a, and a multiply-xorshift fold), 32 hex digits:
/// not keyed, since it must be the same in every process; it guards against accidents, not
/// against someone choosing both mutations (who could as well send the ops they want).
public enum OpsDigest {
    public static func of(_ ops: [Op]) -> String {
        Op.encodedBytes(ops).withUnsafeBufferPointer { of(bytes: $0) }
    }

    /// The digest of canonical ops text already written.
    public static func of(bytes: UnsafeBufferPointer<UInt8>) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x6a09_e667_f3bc_c909 ^ UInt64(bytes.count)
        for byte in bytes {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0x9e37_79b9_7f4a_7c15
            b ^= b &>> 31
        }
        return hex(a) + hex(b)
    }

    private static func hex(_ v: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { out[i] = digits[Int((v >> UInt64(60 - 4 * i)) & 0xf)] }
        return String(decoding: out, as: UTF8.self)
    }
}
