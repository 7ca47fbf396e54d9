import Testing

@testable import Vane

/// The SDK's SSE parser, on Vane's stream format and the spec's edge cases.
@Suite struct ServerSentEventParserTests {
    static let stream =
        "retry: 3000\n\nid: 7\nevent: version\ndata: {\"templateVersion\":\"7\"}\n\n: heartbeat\n\n"
        + "id: 8\r\nevent: version\r\ndata: {\"templateVersion\":\"8\"}\r\n\r\n"

    @Test func vanesStreamInOneChunk() {
        var parser = ServerSentEventParser()
        let events = parser.feed(Array(Self.stream.utf8))
        #expect(events.map(\.type) == ["version", "version"])
        #expect(events.map(\.data) == [#"{"templateVersion":"7"}"#, #"{"templateVersion":"8"}"#])
        #expect(events.map(\.lastEventId) == ["7", "8"])
        #expect(parser.retryMilliseconds == 3000)
        #expect(parser.lastEventId == "8")
    }

    @Test func everySplitPointGivesTheSameEvents() {
        var whole = ServerSentEventParser()
        let expected = whole.feed(Array(Self.stream.utf8))
        let bytes = Array(Self.stream.utf8)
        for split in 0...bytes.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == expected, "split at \(split)")
        }
        var byteByByte = ServerSentEventParser()
        #expect(bytes.flatMap { byteByByte.feed([$0]) } == expected)
    }

    @Test func specEdgeCases() {
        var parser = ServerSentEventParser()
        let text =
            "data: a\ndata:b\n\n" + "event: x\n\n" + "data\n\n" + "id: bad\u{0}id\ndata: c\n\n" + "retry: 1x\n"
            + "data: d\rdata: e\r\r" + "unknown: field\ndata: f"
        let events = parser.feed(Array(text.utf8))
        #expect(events.map(\.data) == ["a\nb", "", "c", "d\ne"], "no data, no event; a bare `data` is empty data")
        #expect(events.map(\.type) == ["message", "message", "message", "message"])
        #expect(events[2].lastEventId == "", "an id with NUL is ignored")
        #expect(parser.retryMilliseconds == nil, "retry takes digits only")
        #expect(parser.feed(Array("\n\n".utf8)).map(\.data) == ["f"], "an event waits for its blank line")
    }
}
