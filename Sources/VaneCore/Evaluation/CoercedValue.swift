public import Foundation

/// A config value as clients receive it: a string, with its typed readings worked out once.
///
/// Vane has one coercion rule, the same on every platform (Firebase's SDKs each have their own:
/// iOS reads `"on"` as false and `"2"` as true; Vane does not). Surrounding white space is ignored.
///
/// - Booleans: true is `1`, `true`, `t`, `yes`, `y`, `on`; false is `0`, `false`, `f`, `no`, `n`,
///   `off` or empty; case-insensitive. Anything else is not a Boolean.
/// - Numbers: decimal notation with an optional sign, fraction and exponent (`42`, `-0.5`, `1e3`).
///   No hex, no `NaN` or `Infinity`, no digit separators.
/// - Integers: a number with no fractional part that fits in `Int` (`1.5` is not an integer).
///
/// A value that does not read as the requested type is a type mismatch: the reader gets its own
/// default back, never a guess.
public struct CoercedValue: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The value as sent.
    public let stringValue: String
    /// The value as a Boolean, or nil when it is not one.
    public let boolValue: Bool?
    /// The value as a number, or nil when it is not one.
    public let doubleValue: Double?
    /// The value as an integer, or nil when it is not one.
    public let intValue: Int?

    /// Reads a value.
    public init(_ string: String) {
        self.stringValue = string
        let trimmed = ValueCoercion.trimmed(string)
        self.boolValue = ValueCoercion.bool(trimmed)
        let double = ValueCoercion.double(trimmed)
        self.doubleValue = double
        self.intValue = Int(trimmed) ?? double.flatMap(ValueCoercion.exactInt)
    }

    /// Reads a value from a literal.
    public init(stringLiteral value: String) { self.init(value) }

    /// The value as sent.
    public var description: String { stringValue }

    /// Decodes the value as JSON into a `Decodable` type.
    ///
    /// - Throws: `DecodingError` when the value is not JSON of that shape.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(stringValue.utf8))
    }
}

/// Vane's one coercion rule, as pure functions. See ``CoercedValue``.
public enum ValueCoercion {
    /// The values that read as true (lower case).
    public static let trueWords: Set<String> = ["1", "true", "t", "yes", "y", "on"]
    /// The values that read as false (lower case); the empty string is one.
    public static let falseWords: Set<String> = ["0", "false", "f", "no", "n", "off", ""]

    /// The text without leading and trailing white space.
    public static func trimmed(_ text: String) -> String {
        let utf8 = text.utf8
        guard let firstByte = utf8.first, let lastByte = utf8.last else { return text }
        // Fast path: both ends are visible ASCII, so there is nothing to trim. (Unicode property
        // lookups dominated reading a 3,000-key cache before this.)
        if (0x21...0x7E).contains(firstByte) && (0x21...0x7E).contains(lastByte) { return text }
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
            first.properties.isWhitespace || last.properties.isWhitespace
        else { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The Boolean a text reads as, or nil.
    public static func bool(_ text: String) -> Bool? {
        // The words are ASCII and at most 5 bytes: pack the lower-cased bytes into an integer
        // rather than allocating a lower-cased string.
        var packed: UInt64 = 0
        var count = 0
        for byte in trimmed(text).utf8 {
            count += 1
            guard count <= 5 else { return nil }
            let lower = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            packed = packed << 8 | UInt64(lower)
        }
        if packedTrueWords.contains(packed) { return true }
        if packedFalseWords.contains(packed) { return false }
        return nil
    }

    private static func pack(_ word: String) -> UInt64 {
        word.utf8.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static let packedTrueWords = Set(trueWords.map(pack))
    private static let packedFalseWords = Set(falseWords.map(pack))

    /// The number a text reads as, or nil.
    public static func double(_ text: String) -> Double? {
        let trimmed = trimmed(text)
        guard isDecimalNumber(trimmed), let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }

    /// The integer a text reads as, or nil.
    public static func int(_ text: String) -> Int? {
        let trimmed = trimmed(text)
        return Int(trimmed) ?? double(trimmed).flatMap(exactInt)
    }

    static func exactInt(_ value: Double) -> Int? {
        guard value == value.rounded(), value >= -9.223_372_036_854_775e18, value < 9.223_372_036_854_775e18 else {
            return nil
        }
        return Int(value)
    }

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
    static func isDecimalNumber(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        var current = bytes.next()
        if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { current = bytes.next() }
        var digits = 0
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            digits += 1
            current = bytes.next()
        }
        if current == UInt8(ascii: ".") {
            current = bytes.next()
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digits += 1
                current = bytes.next()
            }
        }
        guard digits > 0 else { return false }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            current = bytes.next()
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { current = bytes.next() }
            var exponentDigits = 0
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                exponentDigits += 1
                current = bytes.next()
            }
            guard exponentDigits > 0 else { return false }
        }
        return current == nil
    }
}
