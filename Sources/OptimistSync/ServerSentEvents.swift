/// One event of a Server-Sent Events stream.
package struct ServerSentEvent: Sendable, Equatable {
    /// The `event:` field; "message" when the event named none.
    package var type: String
    /// The `data:` lines, joined with "\n".
    package var data: String

    package init(type: String, data: String) {
        self.type = type
        self.data = data
    }
}

/// The Server-Sent Events parser (the text/event-stream rules of the HTML standard), fed
/// bytes as they arrive, in chunks cut anywhere.
///
/// Lines end with "\n", "\r\n" or "\r" (a "\r" at the end of one chunk and a "\n" at the start
/// of the next are one line end); a byte order mark at the stream's start is skipped. A line
/// starting with ':' is a comment; otherwise it is `field: value` (one optional space after the
/// colon; no colon: the whole line is the field, the value empty). `event` sets the event's
/// type, `data` adds a line to its data; `id`, `retry` and unknown fields are ignored (the
/// sync needs neither: a pull after reconnecting covers what was missed). A blank line
/// dispatches the event; an event cut off by the stream's end is dropped.
///
/// One liberty: the standard drops an event with no `data` line, and this parser dispatches it
/// when it has an `event` line, so that `event: ready` alone still says the stream is ready.
///
/// A line or an event over `maxBytes` throws ``TooLong``: a server that never ends its lines
/// cannot grow the client's memory (the sync then reconnects).
package struct ServerSentEvents {
    package struct TooLong: Error, Equatable {}

    package let maxBytes: Int
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var type: String?
    /// The previous chunk ended with "\r": a "\n" starting this one ends no line.
    private var afterCR = false
    /// No line has ended yet: the first may start with a byte order mark.
    private var firstLine = true

    package init(maxBytes: Int = 256 << 10) {
        self.maxBytes = maxBytes
    }

    /// Parses `bytes` and returns the events they complete, in order.
    package mutating func feed(_ bytes: some Sequence<UInt8>) throws(TooLong) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for b in bytes {
            if afterCR {
                afterCR = false
                if b == 0x0A { continue }
            }
            switch b {
            case 0x0A:
                if let e = try endLine() { events.append(e) }
            case 0x0D:
                afterCR = true
                if let e = try endLine() { events.append(e) }
            default:
                guard line.count < maxBytes else { throw TooLong() }
                line.append(b)
            }
        }
        return events
    }

    private mutating func endLine() throws(TooLong) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if firstLine {
            firstLine = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        guard !line.isEmpty else { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let field = line[..<(colon ?? line.endIndex)]
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        if field.elementsEqual("event".utf8) {
            type = String(decoding: value, as: UTF8.self)
        } else if field.elementsEqual("data".utf8) {
            guard data.count + value.count + 1 <= maxBytes else { throw TooLong() }
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            type = nil
        }
        let named = type.flatMap { $0.isEmpty ? nil : $0 }
        guard hasData || named != nil else { return nil }
        let t = named ?? "message"
        return ServerSentEvent(type: t, data: String(decoding: data, as: UTF8.self))
    }
}
