/// Anything app code records metric events with: ``VaneClient`` in the app, `InMemoryConfig`
/// from `VaneTesting` in unit tests (it keeps what was tracked, to assert on).
///
/// ```swift
/// struct CheckoutModel {
///     let tracker: any EventTracker
///     func completed(total: Double) {
///         tracker.track("checkout_completed", value: total, properties: ["currency": "EUR"])
///     }
/// }
/// ```
public protocol EventTracker: Sendable {
    /// Records that the current unit did `name`, worth `value` (nil counts as 1), for the
    /// experiments whose metrics read it. Never blocks on the network, never throws: an event
    /// that cannot be sent as given is logged and left out.
    ///
    /// - Parameters:
    ///   - name: The event's name, as the experiment's metric names it.
    ///   - value: An amount, a duration or a count; nil counts as 1.
    ///   - properties: Kept with the raw event and exported, not analysed.
    func track(_ name: String, value: Double?, properties: [String: String])
}

extension EventTracker {
    /// Records that the current unit did `name`, worth 1.
    ///
    /// ```swift
    /// tracker.track("checkout_started")
    /// ```
    ///
    /// - Parameter name: The event's name, as the experiment's metric names it.
    public func track(_ name: String) {
        track(name, value: nil, properties: [:])
    }

    /// Records that the current unit did `name`, worth `value`.
    /// - Parameters:
    ///   - name: The event's name, as the experiment's metric names it.
    ///   - value: An amount, a duration or a count; nil counts as 1.
    public func track(_ name: String, value: Double?) {
        track(name, value: value, properties: [:])
    }
}
