import Foundation
import VaneCore

/// Anything app code reads config values from: ``VaneClient`` in the app, `InMemoryConfig` from
/// `VaneTesting` in unit tests.
///
/// Depend on this protocol rather than on ``VaneClient`` and tests need no server:
///
/// ```swift
/// struct CheckoutModel {
///     let config: any RemoteConfigReader
///     var usesNewCheckout: Bool { config[.newCheckout] }
/// }
/// ```
///
/// Conforming types implement two requirements; every typed read is built on them and follows
/// Vane's one coercion rule (see `CoercedValue`). Reads are synchronous and safe from any thread.
public protocol RemoteConfigReader: Sendable {
    /// The value for a key and its source, or nil when no override, remote value or default has one.
    /// - Parameter key: The key's name on the server.
    /// - Returns: The first value found, with where it came from; nil when no source has the key.
    func value(forKey key: String) -> ResolvedValue?

    /// Receives a typed read that found a value of another type (the caller got its default).
    /// - Parameter mismatch: The key, the type asked for, the value found and its source.
    func reportTypeMismatch(_ mismatch: TypeMismatch)
}

// The typed reads are inlinable so that an app's read of a `VaneClient` compiles to a direct call
// of its `value(forKey:)`, not a generic call through the protocol (issue #32: a tenth of a read).
extension RemoteConfigReader {
    /// The value of a declared key; its default when nothing reads as `Value`.
    ///
    /// ```swift
    /// if client[.newCheckout] { showNewCheckout() }
    /// ```
    ///
    /// - Parameter key: A key declared as a static property of ``RemoteKeys``.
    @inlinable
    public subscript<Value>(_ key: RemoteKey<Value>) -> Value { value(forKey: key) }

    /// The value of a declared key; its default when nothing reads as `Value`.
    ///
    /// A value that does not read as `Value` (say `"many"` for an `Int` key) is reported through
    /// ``reportTypeMismatch(_:)`` and the key's default is returned.
    ///
    /// ```swift
    /// let limit = client.value(forKey: .maxItems)      // Int, from RemoteKey("max_items", default: 20)
    /// ```
    ///
    /// - Parameter key: A key declared as a static property of ``RemoteKeys``.
    /// - Returns: The first value an override, the remote config or the bundled defaults have,
    ///   read as `Value`; else `key.defaultValue`.
    @inlinable
    public func value<Value>(forKey key: RemoteKey<Value>) -> Value {
        guard let resolved = value(forKey: key.name) else { return key.defaultValue }
        if let value = key.read(resolved.value) { return value }
        reportTypeMismatch(
            TypeMismatch(
                key: key.name,
                expectedType: key.descriptor.typeName,
                value: resolved.value.stringValue,
                source: resolved.source
            )
        )
        return key.defaultValue
    }

    /// The value as a Boolean, or `defaultValue`.
    ///
    /// `1`, `true`, `t`, `yes`, `y` and `on` read as true, `0`, `false`, `f`, `no`, `n`, `off` and
    /// the empty text as false, in any case; anything else is a mismatch, reported, and answers
    /// `defaultValue`.
    ///
    /// ```swift
    /// if client.bool(forKey: "payments_enabled", default: true) { showPayments() }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key's name on the server.
    ///   - defaultValue: What to answer when no source has the key or its value is not a Boolean.
    /// - Returns: The value read as a Boolean, else `defaultValue`.
    @inlinable
    public func bool(forKey key: String, default defaultValue: Bool) -> Bool {
        guard let resolved = value(forKey: key) else { return defaultValue }
        if let value = resolved.value.boolValue { return value }
        return mismatch(key, "Bool", resolved, defaultValue)
    }

    /// The value as an integer, or `defaultValue`.
    ///
    /// `"1.5"` is not an integer: it is a mismatch, reported, and answers `defaultValue`.
    ///
    /// ```swift
    /// let retries = client.int(forKey: "upload_retries", default: 3)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key's name on the server.
    ///   - defaultValue: What to answer when no source has the key or its value is not an integer.
    /// - Returns: The value read as an integer, else `defaultValue`.
    @inlinable
    public func int(forKey key: String, default defaultValue: Int) -> Int {
        guard let resolved = value(forKey: key) else { return defaultValue }
        if let value = resolved.value.intValue { return value }
        return mismatch(key, "Int", resolved, defaultValue)
    }

    /// The value as a number, or `defaultValue`.
    ///
    /// ```swift
    /// let discount = client.double(forKey: "discount_rate", default: 0.1)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key's name on the server.
    ///   - defaultValue: What to answer when no source has the key or its value is not a number.
    /// - Returns: The value read as a number, else `defaultValue`.
    @inlinable
    public func double(forKey key: String, default defaultValue: Double) -> Double {
        guard let resolved = value(forKey: key) else { return defaultValue }
        if let value = resolved.value.doubleValue { return value }
        return mismatch(key, "Double", resolved, defaultValue)
    }

    /// The value as text, or `defaultValue` when no source has the key.
    ///
    /// ```swift
    /// bannerLabel.text = client.string(forKey: "banner_text", default: "Welcome!")
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key's name on the server.
    ///   - defaultValue: What to answer when no source has the key.
    /// - Returns: The value's text (a JSON value stays its JSON text), else `defaultValue`.
    @inlinable
    public func string(forKey key: String, default defaultValue: String) -> String {
        value(forKey: key)?.value.stringValue ?? defaultValue
    }

    /// The value decoded from JSON, or nil when no source has the key or it does not decode
    /// (a mismatch, which is reported).
    ///
    /// ```swift
    /// let layout = client.decode(SettingsLayout.self, forKey: "settings_layout")
    /// ```
    ///
    /// - Parameters:
    ///   - type: The `Decodable` type the JSON text decodes into.
    ///   - key: The key's name on the server.
    /// - Returns: The decoded value; nil when no source has the key or its value does not decode.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String) -> T? {
        guard let resolved = value(forKey: key) else { return nil }
        do {
            return try resolved.value.decode(T.self)
        } catch {
            reportTypeMismatch(
                TypeMismatch(
                    key: key,
                    expectedType: String(describing: T.self),
                    value: resolved.value.stringValue,
                    source: resolved.source
                )
            )
            return nil
        }
    }

    /// The value decoded from JSON, or `defaultValue`.
    ///
    /// - Parameters:
    ///   - type: The `Decodable` type the JSON text decodes into.
    ///   - key: The key's name on the server.
    ///   - defaultValue: What to answer when no source has the key or its value does not decode.
    /// - Returns: The decoded value, else `defaultValue`.
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String, default defaultValue: T) -> T {
        decode(type, forKey: key) ?? defaultValue
    }

    /// Reports a mismatch and returns the caller's default.
    @usableFromInline
    func mismatch<T>(_ key: String, _ typeName: String, _ resolved: ResolvedValue, _ defaultValue: T) -> T {
        reportTypeMismatch(
            TypeMismatch(key: key, expectedType: typeName, value: resolved.value.stringValue, source: resolved.source)
        )
        return defaultValue
    }
}
