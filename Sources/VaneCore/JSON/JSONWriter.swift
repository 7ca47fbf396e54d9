/// How ``JSONValue/serialized(_:)`` lays out a document.
public enum JSONFormatting: Sendable, Hashable {
    /// One line, no spaces: for the wire.
    case compact
    /// Two-space indentation, one member per line: for files people read and diff.
    case pretty
}

extension JSONValue {
    /// The document as JSON text, members in their order, numbers as written.
    public func serialized(_ formatting: JSONFormatting = .compact) -> String {
        var output = ""
        write(to: &output, formatting: formatting, indent: 0)
        if formatting == .pretty { output += "\n" }
        return output
    }

    /// The document as UTF-8 JSON bytes.
    public func serializedData(_ formatting: JSONFormatting = .compact) -> [UInt8] {
        Array(serialized(formatting).utf8)
    }

    private func write(to output: inout String, formatting: JSONFormatting, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let bool): output += bool ? "true" : "false"
        case .number(let number): output += number.text
        case .string(let string): JSONValue.writeString(string, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                JSONValue.newline(&output, formatting: formatting, indent: indent + 1)
                element.write(to: &output, formatting: formatting, indent: indent + 1)
            }
            JSONValue.newline(&output, formatting: formatting, indent: indent)
            output += "]"
        case .object(let object):
            guard !object.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, member) in object.members.enumerated() {
                if index > 0 { output += "," }
                JSONValue.newline(&output, formatting: formatting, indent: indent + 1)
                JSONValue.writeString(member.key, to: &output)
                output += formatting == .pretty ? ": " : ":"
                member.value.write(to: &output, formatting: formatting, indent: indent + 1)
            }
            JSONValue.newline(&output, formatting: formatting, indent: indent)
            output += "}"
        }
    }

    private static func newline(_ output: inout String, formatting: JSONFormatting, indent: Int) {
        guard formatting == .pretty else { return }
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    /// Appends a string as a JSON string literal, escaping what RFC 8259 requires and nothing more.
    ///
    /// For hot paths that write JSON text directly rather than building a ``JSONValue``.
    public static func writeString(_ string: String, to output: inout String) {
        output += "\""
        // Most strings need no escaping: copy runs of plain bytes whole, not scalar by scalar.
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index {
                    output += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self)
                }
                output += escape(byte)
                runStart = index + 1
            }
            if runStart < bytes.count {
                output += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]), as: UTF8.self)
            }
        }
        output += "\""
    }

    /// The escape sequence of a byte that must be escaped.
    private static func escape(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "\""): return "\\\""
        case UInt8(ascii: "\\"): return "\\\\"
        case UInt8(ascii: "\n"): return "\\n"
        case UInt8(ascii: "\r"): return "\\r"
        case UInt8(ascii: "\t"): return "\\t"
        case 0x08: return "\\b"
        case 0x0C: return "\\f"
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
    }
}
