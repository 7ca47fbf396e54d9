/// How ``JSONValue/serialized(_:)`` and ``JSONWriter`` lay out a document.
public enum JSONFormatting: Sendable, Hashable {
    /// One line, no spaces: for the wire.
    case compact
    /// Two-space indentation, one member per line: for files people read and diff.
    case pretty
}

extension JSONValue {
    /// The document as JSON text, members in their order, numbers as written.
    public func serialized(_ formatting: JSONFormatting = .compact) -> String {
        String(decoding: serializedData(formatting), as: UTF8.self)
    }

    /// The document as UTF-8 JSON bytes: the text of ``serialized(_:)``.
    public func serializedData(_ formatting: JSONFormatting = .compact) -> [UInt8] {
        var writer = JSONWriter(formatting: formatting)
        writer.value(self)
        if formatting == .pretty { writer.newline() }
        return writer.bytes
    }

    /// Appends a string as a JSON string literal, escaping what RFC 8259 requires and nothing more.
    ///
    /// For code that builds JSON text as a `String`; ``JSONWriter`` writes the same bytes.
    public static func writeString(_ string: String, to output: inout String) {
        var bytes: [UInt8] = []
        JSONWriter.appendStringLiteral(string, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }
}

/// Writes JSON text straight into a byte buffer: the one JSON writer, behind
/// ``JSONValue/serialized(_:)`` and hot paths that write many documents without building
/// ``JSONValue``s.
///
/// Containers are opened and closed explicitly; commas, line breaks and indentation follow from
/// the calls. Inside an object, write ``key(_:)`` before each value. At the top level values follow
/// each other with nothing between them, so one buffer can hold several documents, told apart by
/// ``bytes``' count after each.
///
/// ```swift
/// var writer = JSONWriter(formatting: .pretty)
/// writer.beginObject()
/// writer.key("banner_text")
/// writer.string("Willkommen!")
/// writer.endObject()
/// // {
/// //   "banner_text": "Willkommen!"
/// // }
/// ```
///
/// Text that does not change from one document to the next (a member repeated in every result)
/// can be encoded once with ``encodedMember(key:value:formatting:depth:)`` and written with
/// ``encoded(_:)-([UInt8])``.
public struct JSONWriter: Sendable {
    /// The text written so far, UTF-8.
    public private(set) var bytes: [UInt8]
    /// The layout.
    public let formatting: JSONFormatting
    /// The indentation level of the next item; containers add one.
    private var depth: Int
    /// How many containers are open.
    private var openContainers = 0
    /// Whether the innermost open container already has an item.
    private var containerHasItems = false
    /// Whether a key was just written, so the next value is its value.
    private var afterKey = false

    /// Creates an empty writer.
    /// - Parameters:
    ///   - formatting: The layout.
    ///   - depth: The indentation level of the top-level values, for text that will sit that deep
    ///     inside another document (only `.pretty` indents).
    ///   - capacity: Bytes to reserve up front.
    public init(formatting: JSONFormatting = .compact, depth: Int = 0, reservingCapacity capacity: Int = 0) {
        self.formatting = formatting
        self.depth = depth
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    // MARK: Structure

    /// Opens an object (`{`).
    public mutating func beginObject() { open(UInt8(ascii: "{")) }

    /// Closes the innermost object (`}`).
    public mutating func endObject() { close(UInt8(ascii: "}")) }

    /// Opens an array (`[`).
    public mutating func beginArray() { open(UInt8(ascii: "[")) }

    /// Closes the innermost array (`]`).
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Writes a member's key inside an object; the next value written is its value.
    public mutating func key(_ key: String) {
        beginItem()
        Self.appendStringLiteral(key, to: &bytes)
        appendColon()
        afterKey = true
    }

    // MARK: Values

    /// Writes a string value.
    public mutating func string(_ string: String) {
        beginValue()
        Self.appendStringLiteral(string, to: &bytes)
    }

    /// Writes `null`.
    public mutating func null() {
        beginValue()
        append("null")
    }

    /// Writes any JSON value, members in their order, numbers as written.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let bool):
            beginValue()
            append(bool ? "true" : "false")
        case .number(let number):
            beginValue()
            append(number.text)
        case .string(let string): self.string(string)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let object):
            beginObject()
            for member in object {
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    /// Writes one item of the innermost container from text encoded earlier: an object member
    /// (`"key": value`, as ``encodedMember(key:value:formatting:depth:)`` makes) or an array
    /// element, encoded with this writer's formatting at the depth it lands at. The writer adds
    /// the comma, line break and indentation before it.
    public mutating func encoded(_ text: UnsafeBufferPointer<UInt8>) {
        beginItem()
        bytes.append(contentsOf: text)
    }

    /// Writes one item of the innermost container from text encoded earlier, as the overload
    /// taking a buffer pointer does.
    public mutating func encoded(_ text: [UInt8]) {
        text.withUnsafeBufferPointer { encoded($0) }
    }

    /// The text of one object member, `"key": value`, for ``encoded(_:)-([UInt8])``: the value laid out as if
    /// the member sat in an object whose members are at `depth`.
    public static func encodedMember(
        key: String,
        value: JSONValue,
        formatting: JSONFormatting,
        depth: Int
    ) -> [UInt8] {
        var writer = JSONWriter(formatting: formatting, depth: depth)
        appendStringLiteral(key, to: &writer.bytes)
        writer.appendColon()
        writer.value(value)
        return writer.bytes
    }

    /// Writes a line break and the current indentation (pretty formatting only), such as the final
    /// line break of a pretty document.
    public mutating func newline() {
        guard formatting == .pretty else { return }
        bytes.append(UInt8(ascii: "\n"))
        var spaces = 2 * depth
        while spaces > 0 {
            let run = min(spaces, Self.spaces.count)
            bytes.append(contentsOf: Self.spaces[..<run])
            spaces -= run
        }
    }

    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 32)

    /// Hands the bytes written so far to `body` (to write them out, say) and empties the buffer,
    /// keeping its storage and the writer's place in the document: a long document goes out in
    /// pieces from a buffer that stays small.
    public mutating func flush(_ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer(body)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Makes room for at least this many bytes in all, so writing up to them does not reallocate.
    public mutating func reserveCapacity(_ capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    // MARK: Layout

    private mutating func open(_ bracket: UInt8) {
        beginValue()
        bytes.append(bracket)
        openContainers += 1
        depth += 1
        containerHasItems = false
    }

    private mutating func close(_ bracket: UInt8) {
        openContainers -= 1
        depth -= 1
        if containerHasItems { newline() }
        bytes.append(bracket)
        // The container just closed is an item of the one around it.
        containerHasItems = true
    }

    /// Before a value: nothing after a key, else a new item of the innermost container.
    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else {
            beginItem()
        }
    }

    /// Before an item of a container: the comma after the one before, a line break, indentation.
    /// At the top level, nothing.
    private mutating func beginItem() {
        guard openContainers > 0 else { return }
        if containerHasItems { bytes.append(UInt8(ascii: ",")) }
        containerHasItems = true
        newline()
    }

    private mutating func appendColon() {
        bytes.append(UInt8(ascii: ":"))
        if formatting == .pretty { bytes.append(UInt8(ascii: " ")) }
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    // MARK: Strings

    /// Appends a string as a JSON string literal, escaping what RFC 8259 requires and nothing
    /// more: `"`, `\` and the control characters U+0000–U+001F. Everything else, non-ASCII
    /// included, is copied as UTF-8.
    static func appendStringLiteral(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { text in
            // Most strings need no escaping: copy runs of plain bytes whole.
            var runStart = 0
            for index in 0..<text.count {
                let byte = text[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index])) }
                appendEscape(byte, to: &output)
                runStart = index + 1
            }
            if runStart < text.count {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<text.count]))
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The escape sequence of a byte that must be escaped.
    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "\n"): output.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): output.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): output.append(UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        default:
            // \u00XX with upper-case hex digits.
            func hexDigit(_ nibble: UInt8) -> UInt8 {
                nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
            }
            output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }
}
