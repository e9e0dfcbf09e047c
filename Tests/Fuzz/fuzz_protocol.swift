// libFuzzer target over the wire protocol's decoders (OptimistProtocol), the code both the
// client's sync and the reference server run on bytes from the network.
//
// Input: one selector byte, then a message body (any bytes). The selector's low two bits pick
// the decoder: 0 a push request and 1 a pull request (after JSONParser.parse of the raw bytes,
// as the server reads them), 2 a push reply and 3 a pull reply (the body as text, as the sync
// gets it). Its next bits pick the ids a push reply is checked against (see `sentIDs`).
//
// What must hold, beyond not crashing:
// - every decoded message encodes to JSON that parses and decodes to an equal message, and that
//   second encoding is the same text (the encoding is canonical);
// - what a decoder accepted is within the protocol's bounds (client id 1 to 200 bytes without
//   U+0000, ids and retry counts whole numbers up to 2^53-1, one digest per unacked id, push
//   results naming sent ids once each in send order, nothing after a retry);
// - a pull reply of puts and deletes, written again by the server's stored-text path
//   (PullReply.encode with PulledChange), decodes to the same reply;
// - a failure is a ProtocolViolation with a message (typed throws make the type certain).
//
// Built by scripts/fuzz.sh with swiftc -sanitize=fuzzer,address against the OptimistModel and
// OptimistProtocol objects of the instrumented build (public API only: the library's C ABI is
// not involved).

import OptimistModel
import OptimistProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Stops the run with a message libFuzzer's log and scripts/fuzz.sh pick up.
func broken(_ what: String, _ detail: @autoclosure () -> String) -> Never {
    var line = Array("fuzz_protocol.swift: \(what): \(detail())\n".utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

func parse(_ text: String, _ what: String) -> JSON {
    do { return try JSONParser.parse(text) } catch { broken("\(what) is not JSON", "\(error): \(text.prefix(400))") }
}

func checkClientID(_ id: String) {
    guard !id.isEmpty, id.utf8.count <= WireProtocol.maxClientIDBytes, !id.utf8.contains(0) else {
        broken("a decoded client_id is out of bounds", "\(id.utf8.count) bytes")
    }
}

func checkID(_ id: UInt64, _ what: String) {
    guard id <= WireProtocol.maxInteger else { broken("a decoded \(what) is over 2^53-1", "\(id)") }
}

func pushRequest(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(bytes) else { return }
    let request: PushRequest
    do throws(ProtocolViolation) { request = try PushRequest.decode(json) } catch {
        if error.message.isEmpty { broken("a push request's violation has no message", "") }
        return
    }
    checkClientID(request.clientID)
    for m in request.mutations {
        checkID(m.id, "mutation id")
        guard m.retry >= 0 else { broken("a decoded retry is negative", "\(m.retry)") }
        checkID(UInt64(m.retry), "retry count")
    }
    let text = request.encoded()
    let again: PushRequest
    do throws(ProtocolViolation) { again = try PushRequest.decode(parse(text, "an encoded push request")) } catch {
        broken("an encoded push request does not decode", "\(error): \(text.prefix(400))")
    }
    guard again == request else { broken("a push request changed through encode and decode", text.prefix(400).description) }
    guard again.encoded() == text else { broken("a push request's encoding is not stable", text.prefix(400).description) }
}

func pullRequest(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(bytes) else { return }
    let request: PullRequest
    do throws(ProtocolViolation) { request = try PullRequest.decode(json) } catch {
        if error.message.isEmpty { broken("a pull request's violation has no message", "") }
        return
    }
    checkClientID(request.clientID)
    for id in request.unacked { checkID(id, "unacked id") }
    guard request.digests.isEmpty || request.digests.count == request.unacked.count else {
        broken("a decoded pull request has \(request.digests.count) digests for \(request.unacked.count) ids", "")
    }
    let text = request.encoded()
    let again: PullRequest
    do throws(ProtocolViolation) { again = try PullRequest.decode(parse(text, "an encoded pull request")) } catch {
        broken("an encoded pull request does not decode", "\(error): \(text.prefix(400))")
    }
    guard again == request else { broken("a pull request changed through encode and decode", text.prefix(400).description) }
    guard again.encoded() == text else { broken("a pull request's encoding is not stable", text.prefix(400).description) }
}

/// The ids a push reply is checked against, from the selector's bits 2-3: the reply's own ids
/// in the order they appear (so a well-formed reply decodes), the same reversed (so order
/// checks fire), 1 to 8, or none.
func sentIDs(_ mode: UInt8, _ body: String) -> [MutationID] {
    switch mode {
    case 0, 1:
        var ids = [MutationID]()
        if case .object(let o)? = try? JSONParser.parse(body), case .array(let items)? = o["results"] {
            for case .object(let r) in items {
                if case .number(let d)? = r["id"], d >= 1, d <= Double(WireProtocol.maxInteger), d == d.rounded(),
                   !ids.contains(MutationID(d)) {
                    ids.append(MutationID(d))
                }
            }
        }
        return mode == 0 ? ids : ids.reversed()
    case 2: return Array(1...8)
    default: return []
    }
}

func pushReply(_ body: String, _ mode: UInt8) {
    let sent = sentIDs(mode, body)
    let reply: PushReply
    do throws(ProtocolViolation) { reply = try PushReply.decode(body, sent: sent) } catch {
        if error.message.isEmpty { broken("a push reply's violation has no message", "") }
        return
    }
    // Results name sent ids, once each, in send order; a retry is the last one.
    var last = -1
    for (n, r) in reply.results.enumerated() {
        guard let p = sent.firstIndex(of: r.id), p > last else {
            broken("a decoded push reply names \(r.id) out of the sent order", "sent \(sent)")
        }
        last = p
        if case .retry = r.outcome, n != reply.results.count - 1 { broken("a decoded push reply goes on after a retry", "") }
        if case .retry(let after?, _) = r.outcome, !(0...86_400_000).contains(after) {
            broken("a decoded retry_after_ms is out of 0...86400000", "\(after)")
        }
    }
    let text = reply.encoded()
    let again: PushReply
    do throws(ProtocolViolation) { again = try PushReply.decode(text, sent: sent) } catch {
        broken("an encoded push reply does not decode", "\(error): \(text.prefix(400))")
    }
    guard again == reply else { broken("a push reply changed through encode and decode", text.prefix(400).description) }
    guard again.encoded() == text else { broken("a push reply's encoding is not stable", text.prefix(400).description) }
}

func pullReply(_ body: String) {
    let reply: PullReply
    do throws(ProtocolViolation) { reply = try PullReply.decode(body) } catch {
        if error.message.isEmpty { broken("a pull reply's violation has no message", "") }
        return
    }
    let text = reply.encoded()
    let again: PullReply
    do throws(ProtocolViolation) { again = try PullReply.decode(text) } catch {
        broken("an encoded pull reply does not decode", "\(error): \(text.prefix(400))")
    }
    guard again == reply else { broken("a pull reply changed through encode and decode", text.prefix(400).description) }
    guard again.encoded() == text else { broken("a pull reply's encoding is not stable", text.prefix(400).description) }

    // The server's path: records kept as canonical text, written into the reply unparsed.
    var stored = [PulledChange]()
    for op in reply.changes {
        switch op {
        case .put(let c, let k, let v): stored.append(PulledChange(collection: c.string, key: k.string, value: JSONWriter.string(v)))
        case .delete(let c, let k): stored.append(PulledChange(collection: c.string, key: k.string, value: nil))
        case .patch, .incr: return  // not what a server sends; the typed encoding above covered them
        }
    }
    let bytes = PullReply.encode(cursor: reply.cursor, more: reply.more, changes: stored, outcomes: reply.outcomes, reset: reply.reset)
    let written = String(decoding: bytes, as: UTF8.self)
    let fromStored: PullReply
    do throws(ProtocolViolation) { fromStored = try PullReply.decode(written) } catch {
        broken("a pull reply written from stored text does not decode", "\(error): \(written.prefix(400))")
    }
    guard fromStored == reply else { broken("a pull reply written from stored text differs", written.prefix(400).description) }
    guard written == text else { broken("the stored-text and typed encodings of a pull reply differ", "\(written.prefix(300)) vs \(text.prefix(300))") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 1 else { return 0 }
    let selector = data[0]
    let body = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch selector & 3 {
    case 0: pushRequest(body)
    case 1: pullRequest(body)
    case 2: pushReply(String(decoding: body, as: UTF8.self), (selector >> 2) & 3)
    default: pullReply(String(decoding: body, as: UTF8.self))
    }
    return 0
}
