import OptimistModel
/// A random (version 4) UUID in its usual lowercase text form.
public func makeClientID() -> String {
    var g = SystemRandomNumberGenerator()
    var bytes = [UInt8](repeating: 0, count: 16)
    for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &g) }
    bytes[6] = (bytes[6] & 0x0F) | 0x40
    bytes[8] = (bytes[8] & 0x3F) | 0x80
    let hex = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    for (i, b) in bytes.enumerated() {
        if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
        out.append(hex[Int(b >> 4)])
        out.append(hex[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
