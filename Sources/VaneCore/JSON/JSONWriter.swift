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

    /// Writes a string literal, escaping what RFC 8259 requires and nothing more.
    static func writeString(_ string: String, to output: inout String) {
        output += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
