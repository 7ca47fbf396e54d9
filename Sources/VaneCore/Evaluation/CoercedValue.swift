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
        // Trimmed once for all three readings (an SDK start reads every cached value).
        let trimmed = ValueCoercion.trimmed(string)
        self.boolValue = ValueCoercion.bool(trimmed: trimmed)
        let double = ValueCoercion.double(trimmed: trimmed)
        self.doubleValue = double
        // Whatever `Int` parses is a decimal number too, so without a number there is no integer.
        self.intValue = double.flatMap { Int(trimmed) ?? ValueCoercion.exactInt($0) }
    }

    /// A value whose readings were worked out before by ``init(_:)`` (the SDK's cache file keeps
    /// them, so a start does not read every value again).
    package init(stringValue: String, boolValue: Bool?, doubleValue: Double?, intValue: Int?) {
        self.stringValue = stringValue
        self.boolValue = boolValue
        self.doubleValue = doubleValue
        self.intValue = intValue
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
        // Fast path: both ends are visible ASCII, so there is nothing to trim. (Unicode property
        // lookups dominated reading a 3,000-key cache before this.)
        let ends =
            text.utf8.withContiguousStorageIfAvailable { ($0.first, $0.last) } ?? (text.utf8.first, text.utf8.last)
        guard let firstByte = ends.0, let lastByte = ends.1 else { return text }
        if (0x21...0x7E).contains(firstByte) && (0x21...0x7E).contains(lastByte) { return text }
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
            first.properties.isWhitespace || last.properties.isWhitespace
        else { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The Boolean a text reads as, or nil.
    public static func bool(_ text: String) -> Bool? { bool(trimmed: trimmed(text)) }

    /// The Boolean a text already trimmed reads as, or nil.
    static func bool(trimmed: String) -> Bool? {
        // The words are ASCII and at most 5 bytes: pack the lower-cased bytes into an integer
        // rather than allocating a lower-cased string, and compare it with the packed words.
        var packed: UInt64 = 0
        var count = 0
        for byte in trimmed.utf8 {
            count += 1
            guard count <= 5 else { return nil }
            let lower = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            packed = packed << 8 | UInt64(lower)
        }
        switch packed {
        // "1", "true", "t", "yes", "y", "on" (`trueWords`; `CoercionTests` checks the lists agree)
        case 0x31, 0x74_72_75_65, 0x74, 0x79_65_73, 0x79, 0x6F_6E: return true
        // "0", "false", "f", "no", "n", "off", "" (`falseWords`)
        case 0x30, 0x66_61_6C_73_65, 0x66, 0x6E_6F, 0x6E, 0x6F_66_66, 0: return false
        default: return nil
        }
    }

    /// The number a text reads as, or nil.
    public static func double(_ text: String) -> Double? { double(trimmed: trimmed(text)) }

    /// The number a text already trimmed reads as, or nil.
    static func double(trimmed: String) -> Double? {
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
