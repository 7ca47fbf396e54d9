import Foundation

extension JSONValue {
    /// Parses a JSON document (RFC 8259), keeping member order and number text.
    ///
    /// Duplicate keys in one object are an error: Vane will not guess which one was meant.
    /// - Throws: ``JSONParseError`` naming the line, column and JSON path of the first problem.
    public static func parse(
        _ data: some Collection<UInt8>,
        limits: JSONParseLimits = .default
    ) throws(JSONParseError)
        -> JSONValue
    {
        var parser = JSONParser(bytes: Array(data), limits: limits)
        return try parser.parseDocument()
    }

    /// Parses a JSON document from a string.
    public static func parse(_ text: String, limits: JSONParseLimits = .default) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }
}

/// A recursive-descent parser over UTF-8 bytes.
private struct JSONParser {
    let bytes: [UInt8]
    let limits: JSONParseLimits
    var position = 0
    var path: [JSONPath.Component] = []

    init(bytes: [UInt8], limits: JSONParseLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        guard bytes.count <= limits.maximumBytes else {
            throw error("the document is \(bytes.count) bytes; the limit is \(limits.maximumBytes)")
        }
        // A UTF-8 byte order mark is tolerated, as editors on some systems write one.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        skipWhitespace()
        guard position < bytes.count else { throw error("the document is empty; expected a JSON value") }
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard position == bytes.count else {
            throw error("expected the end of the document after the top-level value, found \(describeCurrent())")
        }
        return value
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard position < bytes.count else { throw error("the document ends early; expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default:
            throw error(
                "expected a value (object, array, string, number, true, false or null), found \(describeCurrent())"
            )
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= limits.maximumDepth else {
            throw error("objects and arrays are nested more than \(limits.maximumDepth) levels deep")
        }
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count else {
                throw error("the document ends inside an object; expected a member name or '}'")
            }
            guard bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a member name in double quotes, found \(describeCurrent())")
            }
            let keyStart = position
            let key = try parseString()
            guard !object.contains(key: key) else {
                position = keyStart
                throw error("duplicate key \"\(key)\" in one object; each key may appear once")
            }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("expected ':' after the member name \"\(key)\", found \(describeCurrent())")
            }
            position += 1
            skipWhitespace()
            path.append(.key(key))
            let value = try parseValue(depth: depth)
            path.removeLast()
            object.appendNew(key: key, value: value)
            skipWhitespace()
            guard position < bytes.count else { throw error("the document ends inside an object; expected ',' or '}'") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(object)
            }
            throw error("expected ',' or '}' after an object member, found \(describeCurrent())")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= limits.maximumDepth else {
            throw error("objects and arrays are nested more than \(limits.maximumDepth) levels deep")
        }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            path.append(.index(elements.count))
            let value = try parseValue(depth: depth)
            path.removeLast()
            elements.append(value)
            skipWhitespace()
            guard position < bytes.count else { throw error("the document ends inside an array; expected ',' or ']'") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            throw error("expected ',' or ']' after an array element, found \(describeCurrent())")
        }
    }

    mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard position + utf8.count <= bytes.count, Array(bytes[position..<position + utf8.count]) == utf8 else {
            throw error(
                "expected a value (object, array, string, number, true, false or null), found \(describeCurrent())"
            )
        }
        position += utf8.count
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = position
        while position < bytes.count, Self.isNumberByte(bytes[position]) { position += 1 }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let number = JSONNumber(text: text) else {
            position = start
            throw error("\"\(text)\" is not a valid JSON number (no leading zeros, '+', hex or trailing '.')")
        }
        return number
    }

    static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        let start = position
        position += 1
        // Runs of plain bytes are copied whole; escapes are decoded one by one into `decoded`.
        // Without escapes (most strings) the string is made from the input in one step.
        var runStart = position
        var runIsASCII = true
        var decoded: [UInt8] = []
        var hasEscapes = false
        while true {
            guard position < bytes.count else {
                position = start
                throw error("a string is not closed; expected '\"' before the end of the document")
            }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let run = bytes[runStart..<position]
                if !hasEscapes {
                    guard let string = Self.string(utf8: run, isASCII: runIsASCII) else {
                        throw error("a string contains bytes that are not valid UTF-8")
                    }
                    position += 1
                    return string
                }
                guard runIsASCII || Self.string(utf8: run, isASCII: false) != nil else {
                    throw error("a string contains bytes that are not valid UTF-8")
                }
                decoded.append(contentsOf: run)
                position += 1
                // Every run was checked and escapes decode to whole scalars: valid UTF-8.
                return String(decoding: decoded, as: UTF8.self)
            }
            if byte < 0x20 {
                throw error(
                    "a control character (U+\(String(byte, radix: 16, uppercase: true))) must be escaped inside a string"
                )
            }
            if byte == UInt8(ascii: "\\") {
                let run = bytes[runStart..<position]
                guard runIsASCII || Self.string(utf8: run, isASCII: false) != nil else {
                    throw error("a string contains bytes that are not valid UTF-8")
                }
                decoded.append(contentsOf: run)
                hasEscapes = true
                position += 1
                guard position < bytes.count else { throw error("the document ends inside an escape sequence") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "r"): decoded.append(UInt8(ascii: "\r"))
                case UInt8(ascii: "t"): decoded.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    UTF8.encode(scalar) { decoded.append($0) }
                default:
                    position -= 2
                    throw error(
                        "unknown escape '\\\(Character(UnicodeScalar(escape)))'; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
                    )
                }
                runStart = position
                runIsASCII = true
                continue
            }
            if byte >= 0x80 { runIsASCII = false }
            position += 1
        }
    }

    /// The string whose UTF-8 these bytes are, or nil when they are not well-formed UTF-8.
    static func string(utf8 bytes: ArraySlice<UInt8>, isASCII: Bool) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces ill-formed sequences, and its result is well-formed: the input was
        // well-formed exactly when nothing was replaced. ASCII always is.
        guard isASCII || string.utf8.elementsEqual(bytes) else { return nil }
        return string
    }

    mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800...0xDBFF).contains(first) {
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else {
                throw error(
                    "a high surrogate \\u\(String(first, radix: 16)) must be followed by a low surrogate \\uDC00-\\uDFFF"
                )
            }
            position += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw error("a high surrogate must be followed by a low surrogate \\uDC00-\\uDFFF")
            }
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw error("invalid surrogate pair") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else {
            throw error("a lone low surrogate \\u\(String(first, radix: 16)) is not a character")
        }
        return scalar
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("expected four hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("expected four hex digits after \\u, found \(describeCurrent())")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): position += 1
            default: return
            }
        }
    }

    func describeCurrent() -> String {
        guard position < bytes.count else { return "the end of the document" }
        let byte = bytes[position]
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    func error(_ message: String) -> JSONParseError {
        var line = 1
        var lineStart = 0
        let end = min(position, bytes.count)
        for index in 0..<end where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return JSONParseError(
            message: message,
            line: line,
            column: end - lineStart + 1,
            path: JSONPath(components: path)
        )
    }
}
