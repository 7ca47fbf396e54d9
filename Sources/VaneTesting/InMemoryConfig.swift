import Foundation
public import Vane
import VaneCore

/// A `RemoteConfigReader` for unit tests: set values, then assert what the code under test read.
///
/// ```swift
/// @Test func showsNewCheckoutWhenFlagIsOn() {
///     let config = InMemoryConfig()
///     config.set(true, forKey: .newCheckout)
///     let model = CheckoutModel(config: config)
///     #expect(model.usesNewCheckout)
///     #expect(config.readKeys == ["new_checkout"])
/// }
/// ```
///
/// Values resolve like `VaneClient`'s: an override, then a remote value, then a default, all
/// through the same coercion rule, so a test sees what the app would. Safe from any thread.
///
/// It records experiments as the client does: put a key in a variant with
/// ``setExperiment(_:variant:forKey:)``, and its first read records an `Exposure`; events the
/// code under test tracks are kept in ``trackedEvents``.
///
/// ```swift
/// @Test func checkoutTracksItsCompletion() {
///     let config = InMemoryConfig(["checkout_variant": "one_page"])
///     config.setExperiment("checkout-button", variant: "new-flow", forKey: "checkout_variant")
///     let model = CheckoutModel(config: config, tracker: config)
///     model.complete(total: 39.90)
///     #expect(config.exposures.map(\.variant) == ["new-flow"])
///     #expect(config.trackedEvents.map(\.name) == ["checkout_completed"])
/// }
/// ```
public final class InMemoryConfig: RemoteConfigReader, EventTracker, Sendable {
    private struct State {
        var remote: [String: String] = [:]
        var overrides: [String: String] = [:]
        var defaults: [String: String] = [:]
        var reads: [String] = []
        var mismatches: [TypeMismatch] = []
        var experiments: [String: ExperimentAssignment] = [:]
        var exposures: [Exposure] = []
        var tracked: [TrackedEvent] = []
    }

    private let state: LockedValue<State>

    /// The unit exposures and tracked events are recorded for.
    public let unit: String

    /// Creates a config with remote values (all other keys read their caller's default).
    ///
    /// ```swift
    /// let config = InMemoryConfig(["max_items": "50"], defaults: ["banner_text": "Welcome!"])
    /// ```
    ///
    /// - Parameters:
    ///   - remote: Remote values by key name, as text.
    ///   - defaults: Bundled defaults by key name, as text: read when no remote value is set.
    ///   - unit: The randomization id recorded with exposures and tracked events.
    public init(_ remote: [String: String] = [:], defaults: [String: String] = [:], unit: String = "test-unit") {
        state = LockedValue(State(remote: remote, defaults: defaults))
        self.unit = unit
    }

    // MARK: - Reading

    /// The value for a key and its source; every call is recorded in ``readKeys``, and the first
    /// read of a key in an experiment (not overridden) in ``exposures``.
    /// - Parameter key: The key's name.
    /// - Returns: The override, else the remote value, else the default, with its source; nil
    ///   when none is set.
    public func value(forKey key: String) -> ResolvedValue? {
        state.withLockedValue { state in
            state.reads.append(key)
            if let value = state.overrides[key] { return ResolvedValue(CoercedValue(value), source: .override) }
            if let assignment = state.experiments.removeValue(forKey: key) {
                state.exposures.append(
                    Exposure(
                        flagKey: key,
                        experiment: assignment.experiment,
                        variant: assignment.variant,
                        unit: unit,
                        templateVersion: 1,
                        time: Date()
                    )
                )
            }
            if let value = state.remote[key] { return ResolvedValue(CoercedValue(value), source: .remote) }
            if let value = state.defaults[key] { return ResolvedValue(CoercedValue(value), source: .default) }
            return nil
        }
    }

    /// Records the event in ``trackedEvents``.
    /// - Parameters:
    ///   - name: The event's name.
    ///   - value: Its value; nil counts as 1.
    ///   - properties: Details kept with the event.
    public func track(_ name: String, value: Double?, properties: [String: String]) {
        let event = TrackedEvent(name: name, value: value, properties: properties, unit: unit, time: Date())
        state.withLockedValue { $0.tracked.append(event) }
    }

    /// Records the mismatch in ``typeMismatches``.
    /// - Parameter mismatch: The key, the type asked for, the value found and its source.
    public func reportTypeMismatch(_ mismatch: TypeMismatch) {
        state.withLockedValue { $0.mismatches.append(mismatch) }
    }

    // MARK: - Setting values

    /// Sets a remote value.
    /// - Parameters:
    ///   - value: The value as text, read with the same coercion rule as the client's.
    ///   - key: The key's name.
    public func set(_ value: String, forKey key: String) {
        state.withLockedValue { $0.remote[key] = value }
    }

    /// Sets a declared key's remote value.
    ///
    /// ```swift
    /// config.set(false, forKey: .paymentsEnabled)
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value, written as the key's text form.
    ///   - key: A key declared as a static property of `RemoteKeys`.
    public func set<Value>(_ value: Value, forKey key: RemoteKey<Value>) {
        set(key.text(for: value), forKey: key.name)
    }

    /// Removes a remote value.
    /// - Parameter key: The key's name.
    public func removeValue(forKey key: String) {
        state.withLockedValue { $0.remote[key] = nil }
    }

    /// Puts a key in a running experiment's variant, as a fetch response does: its next read
    /// records an `Exposure` (once, like the client; set it again for another).
    ///
    /// - Parameters:
    ///   - experiment: The experiment's key, recorded in the exposure.
    ///   - variant: The variant the unit is in, recorded in the exposure.
    ///   - key: The key the experiment controls.
    public func setExperiment(_ experiment: String, variant: String, forKey key: String) {
        state.withLockedValue { $0.experiments[key] = ExperimentAssignment(experiment: experiment, variant: variant) }
    }

    /// Sets a bundled default.
    /// - Parameters:
    ///   - value: The default as text.
    ///   - key: The key's name.
    public func setDefault(_ value: String, forKey key: String) {
        state.withLockedValue { $0.defaults[key] = value }
    }

    /// Sets a local override, which wins over remote values and defaults.
    /// - Parameters:
    ///   - value: The value as text.
    ///   - key: The key's name.
    public func setOverride(_ value: String, forKey key: String) {
        state.withLockedValue { $0.overrides[key] = value }
    }

    /// Overrides a declared key.
    /// - Parameters:
    ///   - value: The value, written as the key's text form.
    ///   - key: A key declared as a static property of `RemoteKeys`.
    public func setOverride<Value>(_ value: Value, forKey key: RemoteKey<Value>) {
        setOverride(key.text(for: value), forKey: key.name)
    }

    /// Removes an override.
    /// - Parameter key: The key's name.
    public func removeOverride(forKey key: String) {
        state.withLockedValue { $0.overrides[key] = nil }
    }

    // MARK: - Assertions

    /// Every key read, in order, with repeats.
    public var readKeys: [String] { state.withLockedValue { $0.reads } }

    /// Whether the key was read at least once.
    /// - Parameter key: The key's name.
    /// - Returns: True when code read it, whatever it found.
    public func wasRead(forKey key: String) -> Bool { state.withLockedValue { $0.reads.contains(key) } }

    /// Whether the declared key was read at least once.
    ///
    /// ```swift
    /// #expect(config.wasRead(forKey: .paymentsEnabled))
    /// ```
    ///
    /// - Parameter key: A key declared as a static property of `RemoteKeys`.
    /// - Returns: True when code read it, whatever it found.
    public func wasRead<Value>(forKey key: RemoteKey<Value>) -> Bool { wasRead(forKey: key.name) }

    /// Every typed read that found a value of another type.
    public var typeMismatches: [TypeMismatch] { state.withLockedValue { $0.mismatches } }

    /// Every exposure recorded, in order.
    public var exposures: [Exposure] { state.withLockedValue { $0.exposures } }

    /// Every event tracked, in order.
    public var trackedEvents: [TrackedEvent] { state.withLockedValue { $0.tracked } }

    /// Forgets recorded reads, mismatches, exposures and tracked events; values and experiments
    /// stay.
    public func resetRecording() {
        state.withLockedValue { state in
            state.reads.removeAll()
            state.mismatches.removeAll()
            state.exposures.removeAll()
            state.tracked.removeAll()
        }
    }
}
