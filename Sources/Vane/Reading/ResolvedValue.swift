import VaneCore

/// Where a value came from.
///
/// A read looks in this order and takes the first value it finds: a local override, the activated
/// remote config, the bundled defaults; the caller's own default comes last and has no source.
public enum ValueSource: String, Sendable, Hashable, CaseIterable {
    /// Set on this device with ``VaneClient/setOverride(_:forKey:)-(String,_)``, for QA and debugging.
    case override
    /// From the server, fetched and activated.
    case remote
    /// From the bundled defaults the client was created with.
    case `default`
}

/// A value with its source.
public struct ResolvedValue: Sendable, Hashable {
    /// The value, with its typed readings.
    public let value: CoercedValue
    /// Where it came from.
    public let source: ValueSource

    /// Creates a resolved value.
    /// - Parameters:
    ///   - value: The value, with its typed readings.
    ///   - source: Where it came from.
    public init(_ value: CoercedValue, source: ValueSource) {
        self.value = value
        self.source = source
    }
}

/// A typed read that found a value of another type: the caller got its default instead.
public struct TypeMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The key that was read.
    public let key: String
    /// The type the caller asked for (`Bool`, `Int`, `Double`, a JSON type, a variant enum).
    public let expectedType: String
    /// The value found, as sent.
    public let value: String
    /// Where the value came from.
    public let source: ValueSource

    /// Creates a report.
    /// - Parameters:
    ///   - key: The key that was read.
    ///   - expectedType: The type the caller asked for.
    ///   - value: The value found, as sent.
    ///   - source: Where the value came from.
    public init(key: String, expectedType: String, value: String, source: ValueSource) {
        self.key = key
        self.expectedType = expectedType
        self.value = value
        self.source = source
    }

    /// The report as one line, for logs.
    public var description: String {
        "the \(source.rawValue) value of \"\(key)\" is not a \(expectedType) (found \"\(value.prefix(80))\"); "
            + "the caller's default was used: fix the value on the server or the declared type in the app"
    }
}
