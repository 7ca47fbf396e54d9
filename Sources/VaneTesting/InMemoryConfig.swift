public import Vane
import VaneCore

/// A ``RemoteConfigReader`` for unit tests: set values, then assert what the code under test read.
///
/// ```swift
/// @Test func showsNewCheckoutWhenFlagIsOn() {
///     let config = InMemoryConfig()
///     config.set(true, for: .newCheckout)
///     let model = CheckoutModel(config: config)
///     #expect(model.usesNewCheckout)
///     #expect(config.readKeys == ["new_checkout"])
/// }
/// ```
///
/// Values resolve like ``VaneClient``'s: an override, then a remote value, then a default, all
/// through the same coercion rule, so a test sees what the app would. Safe from any thread.
public final class InMemoryConfig: RemoteConfigReader, Sendable {
    private struct State {
        var remote: [String: String] = [:]
        var overrides: [String: String] = [:]
        var defaults: [String: String] = [:]
        var reads: [String] = []
        var mismatches: [TypeMismatch] = []
    }

    private let state: LockedValue<State>

    /// Creates a config with remote values (all other keys read their caller's default).
    public init(_ remote: [String: String] = [:], defaults: [String: String] = [:]) {
        state = LockedValue(State(remote: remote, defaults: defaults))
    }

    // MARK: - Reading

    /// The value for a key and its source; every call is recorded in ``readKeys``.
    public func value(forKey key: String) -> ResolvedValue? {
        state.withLockedValue { state in
            state.reads.append(key)
            if let value = state.overrides[key] { return ResolvedValue(CoercedValue(value), source: .override) }
            if let value = state.remote[key] { return ResolvedValue(CoercedValue(value), source: .remote) }
            if let value = state.defaults[key] { return ResolvedValue(CoercedValue(value), source: .default) }
            return nil
        }
    }

    /// Records the mismatch in ``typeMismatches``.
    public func reportTypeMismatch(_ mismatch: TypeMismatch) {
        state.withLockedValue { $0.mismatches.append(mismatch) }
    }

    // MARK: - Setting values

    /// Sets a remote value.
    public func set(_ value: String, forKey key: String) {
        state.withLockedValue { $0.remote[key] = value }
    }

    /// Sets a declared key's remote value.
    public func set<Value>(_ value: Value, for key: RemoteKey<Value>) {
        set(key.text(for: value), forKey: key.name)
    }

    /// Removes a remote value.
    public func removeValue(forKey key: String) {
        state.withLockedValue { $0.remote[key] = nil }
    }

    /// Sets a bundled default.
    public func setDefault(_ value: String, forKey key: String) {
        state.withLockedValue { $0.defaults[key] = value }
    }

    /// Sets a local override, which wins over remote values and defaults.
    public func setOverride(_ value: String, forKey key: String) {
        state.withLockedValue { $0.overrides[key] = value }
    }

    /// Overrides a declared key.
    public func setOverride<Value>(_ value: Value, for key: RemoteKey<Value>) {
        setOverride(key.text(for: value), forKey: key.name)
    }

    /// Removes an override.
    public func removeOverride(forKey key: String) {
        state.withLockedValue { $0.overrides[key] = nil }
    }

    // MARK: - Assertions

    /// Every key read, in order, with repeats.
    public var readKeys: [String] { state.withLockedValue { $0.reads } }

    /// Whether the key was read at least once.
    public func wasRead(_ key: String) -> Bool { state.withLockedValue { $0.reads.contains(key) } }

    /// Whether the declared key was read at least once.
    public func wasRead<Value>(_ key: RemoteKey<Value>) -> Bool { wasRead(key.name) }

    /// Every typed read that found a value of another type.
    public var typeMismatches: [TypeMismatch] { state.withLockedValue { $0.mismatches } }

    /// Forgets recorded reads and mismatches; values stay.
    public func resetRecording() {
        state.withLockedValue { state in
            state.reads.removeAll()
            state.mismatches.removeAll()
        }
    }
}
