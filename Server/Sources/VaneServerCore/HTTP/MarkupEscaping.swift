/// Escapes text for HTML and XML content and attribute values: `&`, `<`, `>`, `"` and `'`.
///
/// Works on UTF-8 bytes: the five characters are ASCII, so no byte of a multi-byte character is
/// ever one of them, and long outputs (a page of 3,000 flags) are written without going through
/// `Character`s.
package enum MarkupEscaping {
    /// Appends `text`, escaped, to `output`.
    package static func append(_ text: String, to output: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): output.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): output.append(contentsOf: "&#39;".utf8)
            default: output.append(byte)
            }
        }
    }

    /// `text`, escaped.
    package static func escaped(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        append(text, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}
