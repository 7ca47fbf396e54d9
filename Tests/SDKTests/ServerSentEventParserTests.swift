import Testing

@testable import Vane

/// The SDK's SSE parser, on Vane's stream format and the spec's edge cases.
@Suite struct ServerSentEventParserTests {
    static let stream =
        "retry: 3000\n\nid: 7\nevent: version\ndata: {\"templateVersion\":\"7\"}\n\n: heartbeat\n\n"
        + "id: 8\r\nevent: version\r\ndata: {\"templateVersion\":\"8\"}\r\n\r\n"

    @Test func vanesStreamInOneChunk() throws {
        var parser = ServerSentEventParser()
        let events = try parser.feed(Array(Self.stream.utf8))
        #expect(events.map(\.type) == ["version", "version"])
        #expect(events.map(\.data) == [#"{"templateVersion":"7"}"#, #"{"templateVersion":"8"}"#])
        #expect(events.map(\.lastEventId) == ["7", "8"])
        #expect(parser.retryMilliseconds == 3000)
        #expect(parser.lastEventId == "8")
    }

    @Test func everySplitPointGivesTheSameEvents() throws {
        var whole = ServerSentEventParser()
        let expected = try whole.feed(Array(Self.stream.utf8))
        let bytes = Array(Self.stream.utf8)
        for split in 0...bytes.count {
            var parser = ServerSentEventParser()
            let events = try parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == expected, "split at \(split)")
        }
        var byteByByte = ServerSentEventParser()
        #expect(try bytes.flatMap { try byteByByte.feed([$0]) } == expected)
    }

    @Test func specEdgeCases() throws {
        var parser = ServerSentEventParser()
        let text =
            "data: a\ndata:b\n\n" + "event: x\n\n" + "data\n\n" + "id: bad\u{0}id\ndata: c\n\n" + "retry: 1x\n"
            + "data: d\rdata: e\r\r" + "unknown: field\ndata: f"
        let events = try parser.feed(Array(text.utf8))
        #expect(events.map(\.data) == ["a\nb", "", "c", "d\ne"], "no data, no event; a bare `data` is empty data")
        #expect(events.map(\.type) == ["message", "message", "message", "message"])
        #expect(events[2].lastEventId == "", "an id with NUL is ignored")
        #expect(parser.retryMilliseconds == nil, "retry takes digits only")
        #expect(try parser.feed(Array("\n\n".utf8)).map(\.data) == ["f"], "an event waits for its blank line")
    }

    /// A server or proxy that never ends a line, or sends one endless event, cannot fill the
    /// app's memory: past the bound the parser throws and the connection is dropped.
    @Test func aLineOrEventPastTheBoundEndsTheStream() throws {
        var endless = ServerSentEventParser()
        let chunk = Array(repeating: UInt8(ascii: "a"), count: 4096)
        #expect(throws: ServerSentEventParser.Overflow.self) {
            for _ in 0...(ServerSentEventParser.maximumEventBytes / chunk.count) { _ = try endless.feed(chunk) }
        }
        var manyLines = ServerSentEventParser()
        let dataLine = Array(("data: " + String(repeating: "b", count: 1000) + "\n").utf8)
        #expect(throws: ServerSentEventParser.Overflow.self) {
            for _ in 0...(ServerSentEventParser.maximumEventBytes / 1000) { _ = try manyLines.feed(dataLine) }
        }
        // Many events each under the bound are fine, however long the stream.
        var steady = ServerSentEventParser()
        var count = 0
        for _ in 0..<200 { count += try steady.feed(dataLine + Array("\n".utf8)).count }
        #expect(count == 200)
    }

    /// `retry:` takes digits only; a value too large for an Int is ignored, and the SDK clamps
    /// whatever it gets (see DelayTests).
    @Test func anOverlongRetryIsIgnored() throws {
        var parser = ServerSentEventParser()
        _ = try parser.feed(Array("retry: 99999999999999999999999\n\n".utf8))
        #expect(parser.retryMilliseconds == nil)
    }
}
