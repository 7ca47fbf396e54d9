import FuzzSupport
import VaneCore

runFuzzer(fuzzJSON)

/// JSONValue.parse on any bytes; a document it reads, written compact or pretty, reads back as
/// the same value (member order and number text included).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let value = try? JSONValue.parse(fuzzInput(data, size)) else { return 0 }
    for formatting in [JSONFormatting.compact, .pretty] {
        let written = value.serializedData(formatting)
        let text = String(decoding: written, as: UTF8.self)
        guard let reread = try? JSONValue.parse(written) else {
            require(false, "the writer's \(formatting) output does not parse: \(text)")
            return 0
        }
        require(reread == value, "\(formatting) output reads back as another value: \(text)")
    }
    return 0
}
