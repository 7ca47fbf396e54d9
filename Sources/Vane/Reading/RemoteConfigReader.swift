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
    func value(forKey key: String) -> ResolvedValue?

    /// Receives a typed read that found a value of another type (the caller got its default).
    func reportTypeMismatch(_ mismatch: TypeMismatch)
}

extension RemoteConfigReader {
    /// The value of a declared key; its default when nothing reads as `Value`.
    public subscript<Value>(_ key: RemoteKey<Value>) -> Value { value(of: key) }

    /// The value of a declared key; its default when nothing reads as `Value`.
    public func value<Value>(of key: RemoteKey<Value>) -> Value {
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
    public func bool(_ key: String, default defaultValue: Bool) -> Bool {
        guard let resolved = value(forKey: key) else { return defaultValue }
        if let value = resolved.value.boolValue { return value }
        return mismatch(key, "Bool", resolved, defaultValue)
    }

    /// The value as an integer, or `defaultValue`.
    public func int(_ key: String, default defaultValue: Int) -> Int {
        guard let resolved = value(forKey: key) else { return defaultValue }
        if let value = resolved.value.intValue { return value }
        return mismatch(key, "Int", resolved, defaultValue)
    }

    /// The value as a number, or `defaultValue`.
    public func double(_ key: String, default defaultValue: Double) -> Double {
        guard let resolved = value(forKey: key) else { return defaultValue }
        if let value = resolved.value.doubleValue { return value }
        return mismatch(key, "Double", resolved, defaultValue)
    }

    /// The value as text, or `defaultValue` when no source has the key.
    public func string(_ key: String, default defaultValue: String) -> String {
        value(forKey: key)?.value.stringValue ?? defaultValue
    }

    /// The value decoded from JSON, or nil when no source has the key or it does not decode
    /// (a mismatch, which is reported).
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
    public func decode<T: Decodable>(_ type: T.Type, forKey key: String, default defaultValue: T) -> T {
        decode(type, forKey: key) ?? defaultValue
    }

    /// Reports a mismatch and returns the caller's default.
    private func mismatch<T>(_ key: String, _ typeName: String, _ resolved: ResolvedValue, _ defaultValue: T) -> T {
        reportTypeMismatch(
            TypeMismatch(key: key, expectedType: typeName, value: resolved.value.stringValue, source: resolved.source)
        )
        return defaultValue
    }
}
