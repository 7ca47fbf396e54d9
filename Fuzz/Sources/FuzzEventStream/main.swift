import FuzzSupport

@testable import Vane

runFuzzer(fuzzEventStream)

/// ServerSentEventParser on any bytes; however the network splits them (whole, in two at a point
/// the input chooses, byte by byte), the same events come out, or the same overflow.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let whole = parse([bytes[...]])
    let halves = parse([bytes[..<split], bytes[split...]])
    let single = parse(bytes.indices.map { bytes[$0...$0] })
    require(halves == whole, "split at \(split): \(describe(halves)) instead of \(describe(whole))")
    require(single == whole, "byte by byte: \(describe(single)) instead of \(describe(whole))")
    return 0
}

/// What the parser made of the chunks: its events, last id and retry, or nil for an overflow.
private struct Parsed: Equatable, CustomStringConvertible {
    var events: [ServerSentEvent]
    var lastEventId: String
    var retryMilliseconds: Int?

    var description: String {
        "\(events.count) events, id \(lastEventId), retry \(String(describing: retryMilliseconds))"
    }
}

private func describe(_ parsed: Parsed?) -> String {
    parsed?.description ?? "an overflow"
}

private func parse(_ chunks: [ArraySlice<UInt8>]) -> Parsed? {
    var parser = ServerSentEventParser()
    var events: [ServerSentEvent] = []
    for chunk in chunks {
        guard let more = try? parser.feed(chunk) else { return nil }
        events += more
    }
    return Parsed(events: events, lastEventId: parser.lastEventId, retryMilliseconds: parser.retryMilliseconds)
}
