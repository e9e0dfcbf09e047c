import Testing
@testable import OptimistSync

/// The text/event-stream parser: line ends, fields, comments, dispatch, chunking, limits.
@Suite struct ServerSentEventsTests {
    func parse(_ chunks: [String], maxBytes: Int = 256 << 10) throws -> [ServerSentEvent] {
        var p = ServerSentEvents(maxBytes: maxBytes)
        var out: [ServerSentEvent] = []
        for c in chunks { out += try p.feed(Array(c.utf8)) }
        return out
    }

    func ev(_ type: String, _ data: String) -> ServerSentEvent { ServerSentEvent(type: type, data: data) }

    @Test func eventsWithTypeAndData() throws {
        #expect(try parse(["event: ready\ndata: {}\n\nevent: poke\ndata: {}\n\n"]) == [ev("ready", "{}"), ev("poke", "{}")])
        // No `event` line: "message". Several data lines joined with "\n".
        #expect(try parse(["data: a\ndata: b\n\n"]) == [ev("message", "a\nb")])
        #expect(try parse(["event:\ndata: x\n\n"]) == [ev("message", "x")])
    }

    @Test func commentsAndUnknownFieldsAreIgnored() throws {
        #expect(try parse([": keepalive\n\n"]) == [])
        #expect(try parse([": keepalive\nevent: poke\n: in between\ndata: {}\nid: 7\nretry: 10\nfoo: bar\n\n"]) == [ev("poke", "{}")])
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func everyLineEnd(_ end: String) throws {
        let text = "event: poke\(end)data: 1\(end)\(end): c\(end)data: 2\(end)\(end)"
        #expect(try parse([text]) == [ev("poke", "1"), ev("message", "2")])
    }

    @Test func crAtAChunksEndAndLfAtTheNextsStartAreOneLineEnd() throws {
        // Were the "\n" a line of its own, it would dispatch `poke` before its data.
        #expect(try parse(["event: poke\r", "\ndata: x\r", "\n\r", "\n"]) == [ev("poke", "x")])
        // A lone "\r" then a line that starts otherwise is still a line end.
        #expect(try parse(["data: a\r", "\r"]) == [ev("message", "a")])
    }

    @Test func anyChunkingGivesTheSameEvents() throws {
        let text = "\u{FEFF}event: ready\r\ndata: {}\r\n\r\n: keepalive\n\nevent: poke\rdata: é ü\r\rdata\n\n"
        let whole = try parse([text])
        #expect(whole == [ev("ready", "{}"), ev("poke", "é ü"), ev("message", "")])
        // Byte by byte, cutting every character and line end in two.
        var p = ServerSentEvents()
        var bytewise: [ServerSentEvent] = []
        for b in Array(text.utf8) { bytewise += try p.feed([b]) }
        #expect(bytewise == whole)
    }

    @Test func oneOptionalSpaceAfterTheColon() throws {
        #expect(try parse(["data:x\n\n"]) == [ev("message", "x")])
        #expect(try parse(["data:  two\n\n"]) == [ev("message", " two")])
        #expect(try parse(["data\n\n"]) == [ev("message", "")])   // no colon: the field, an empty value
        #expect(try parse(["data: a: b\n\n"]) == [ev("message", "a: b")])
    }

    @Test func whatIsNotDispatched() throws {
        #expect(try parse(["id: 1\n\n", "retry: 5\n\n", "\n\n\n"]) == [])
        // Cut off by the end of the stream: dropped.
        #expect(try parse(["event: poke\ndata: {}\n"]) == [])
        // The type does not outlive its event.
        #expect(try parse(["event: poke\ndata: 1\n\ndata: 2\n\n"]) == [ev("poke", "1"), ev("message", "2")])
    }

    @Test func anEventWithATypeAndNoDataIsDispatched() throws {
        // The liberty the parser takes (the standard drops it): `event: ready` alone is a ready.
        #expect(try parse(["event: ready\n\n"]) == [ev("ready", "")])
    }

    @Test func theByteOrderMarkOnlyAtTheStart() throws {
        #expect(try parse(["\u{FEFF}data: a\n\n"]) == [ev("message", "a")])
        // Later, it is part of the field name: an unknown field.
        #expect(try parse(["data: a\n\n\u{FEFF}data: b\n\n"]) == [ev("message", "a")])
    }

    @Test func overlongLinesAndEventsThrow() throws {
        #expect(throws: ServerSentEvents.TooLong.self) { try parse([String(repeating: "x", count: 2_000)], maxBytes: 1_000) }
        let lines = String(repeating: "data: 0123456789\n", count: 200)
        #expect(throws: ServerSentEvents.TooLong.self) { try parse([lines], maxBytes: 1_000) }
        // Comments and dispatched events do not add up.
        let many = String(repeating: ": keepalive\ndata: 0123456789\n\n", count: 500)
        #expect(try parse([many], maxBytes: 1_000).count == 500)
    }
}
