public import Foundation

/// Which keys a live update activates at once; every other key waits for the app's next
/// ``VaneClient/activate()``.
public enum LiveApplyPolicy: Sendable, Hashable {
    /// Every changed key is activated at once: the whole new config replaces the active one.
    case all
    /// Nothing is activated: new values are fetched and wait, and ``VaneClient/liveUpdates``
    /// says which keys changed (Firebase's real-time listener).
    case none
    /// Keys the server marks `realtime` (the template's `vane.realtime`), keys declared with
    /// `realtime: true` in the client's ``VaneClient/Configuration/keys``, and the keys given here.
    case allowlisted(Set<String>)
}

/// How ``VaneClient/startLiveUpdates()`` behaves.
public struct LiveUpdateOptions: Sendable, Hashable {
    /// Which keys are activated at once. By default, the ones marked real-time.
    public var policy: LiveApplyPolicy
    /// The pauses between reconnection attempts. Attempts never stop; the server's `retry:`
    /// (3 s from `vane serve`) is the shortest pause after a stream that was open.
    public var reconnect: BackoffPolicy
    /// The longest silence the stream may have before the client reconnects. The server sends a
    /// heartbeat every 15 s by default, so a connection that broke without a word is noticed.
    public var idleTimeout: TimeInterval

    /// Creates options; the defaults apply real-time keys, reconnect after 1, 2, 4 … up to 60 s
    /// (with jitter) and give up on a stream silent for 45 s.
    ///
    /// ```swift
    /// configuration.liveUpdates = LiveUpdateOptions(policy: .allowlisted(["payments_enabled"]))
    /// ```
    ///
    /// - Parameters:
    ///   - policy: Which keys are activated at once.
    ///   - reconnect: The pauses between reconnection attempts.
    ///   - idleTimeout: Seconds of silence after which the client reconnects.
    public init(
        policy: LiveApplyPolicy = .allowlisted([]),
        reconnect: BackoffPolicy = BackoffPolicy(initial: 1, maximum: 60, jitter: 0.5),
        idleTimeout: TimeInterval = 45
    ) {
        self.policy = policy
        self.reconnect = reconnect
        self.idleTimeout = idleTimeout
    }
}
