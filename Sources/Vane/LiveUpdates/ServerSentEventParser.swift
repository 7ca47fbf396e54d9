/// One event of a `text/event-stream`.
struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field; `message` when the event has none.
    var type: String
    /// The `data:` lines, joined with newlines.
    var data: String
    /// The last `id:` seen on the stream so far (ids persist across events, as the spec says).
    var lastEventId: String
}

/// Turns the bytes of a `text/event-stream` into events, however the network splits them.
///
/// Follows the WHATWG "event stream interpretation" rules: lines end with CRLF, LF or CR; a blank
/// line dispatches the event; lines starting with `:` are comments (heartbeats); `retry:` takes
/// only digits; an `id:` containing NUL is ignored; an event without data is not dispatched.
/// The building block of the SDK's live updates (issue #5).
struct ServerSentEventParser: Sendable {
    /// A line or an event longer than this many bytes ends the stream: Vane's events are a few
    /// dozen bytes, and a server or proxy that never ends a line must not fill the app's memory.
    static let maximumEventBytes = 64 * 1024

    /// The stream broke the bound above.
    struct Overflow: Error, Sendable, CustomStringConvertible {
        var description: String {
            "the event stream sent a line or event longer than \(ServerSentEventParser.maximumEventBytes) bytes"
        }
    }

    private var line: [UInt8] = []
    private var eventBytes = 0
    private var lastByteWasCR = false
    private var eventType = ""
    private var data: [String] = []
    private var hasData = false
    /// The last event id, kept across events for `Last-Event-ID` on reconnect.
    private(set) var lastEventId = ""
    /// The reconnection delay the server asked for, in milliseconds.
    private(set) var retryMilliseconds: Int?

    /// Consumes a chunk and returns the events it completes.
    /// - Throws: ``Overflow`` when a line or event grows past ``maximumEventBytes``.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws(Overflow) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if lastByteWasCR {
                lastByteWasCR = false
                if byte == 0x0A { continue }  // the LF of a CRLF
            }
            switch byte {
            case 0x0A:
                if let event = endLine() { events.append(event) }
            case 0x0D:
                lastByteWasCR = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
                if line.count + eventBytes > Self.maximumEventBytes { throw Overflow() }
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event": eventType = String(value)
        case "data":
            data.append(String(value))
            eventBytes += line.count
            hasData = true
        case "id" where !value.contains("\u{0}"): lastEventId = String(value)
        case "retry" where !value.isEmpty && value.allSatisfy(\.isASCIIDigit):
            retryMilliseconds = Int(value)
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data.removeAll()
            eventBytes = 0
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(
            type: eventType.isEmpty ? "message" : eventType,
            data: data.joined(separator: "\n"),
            lastEventId: lastEventId
        )
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
