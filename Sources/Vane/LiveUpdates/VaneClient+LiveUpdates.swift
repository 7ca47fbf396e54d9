import Foundation
import Logging

extension VaneClient {
    /// Opens the server's event stream and keeps it open: when a newer template version is
    /// published, the client fetches it at once (bypassing the minimum fetch interval, honouring
    /// backoff), activates the keys the ``LiveUpdateOptions/policy`` allows and reports it on
    /// ``liveUpdates``.
    ///
    /// The connection never gives up: after a failure it reconnects with exponential backoff and
    /// jitter, and after every reconnect it asks for anything published while it was away.
    /// Watch ``liveUpdateStates`` to show its state. Calling this while live updates run does nothing.
    ///
    /// ```swift
    /// client.startLiveUpdates()
    /// for await update in client.liveUpdates where update.pendingKeys.contains("checkout_layout") {
    ///     showRestartHint()
    /// }
    /// ```
    public func startLiveUpdates() {
        liveConnection.start(self)
    }

    /// Closes the event stream for good (until ``startLiveUpdates()``). Values already fetched stay.
    public func stopLiveUpdates() {
        liveConnection.halt(reporting: .stopped)
    }

    /// Closes the event stream while the app is in the background; ``resumeLiveUpdates()`` reopens it.
    /// Does nothing when live updates are stopped.
    public func pauseLiveUpdates() {
        guard liveConnection.connectionState != .stopped else { return }
        liveConnection.halt(reporting: .paused)
    }

    /// Reopens a paused event stream at once and fetches whatever was published meanwhile.
    /// Does nothing unless live updates are paused.
    public func resumeLiveUpdates() {
        guard liveConnection.connectionState == .paused else { return }
        liveConnection.start(self)
    }

    /// Where the live-update connection stands now.
    public var liveUpdateState: LiveUpdateState { liveConnection.connectionState }

    /// Every change of ``liveUpdateState``. Each access is a new subscription.
    public var liveUpdateStates: AsyncStream<LiveUpdateState> { liveConnection.states.subscribe() }

    /// Each new version live updates fetched: which keys changed, which were applied at once and
    /// which wait for ``activate()``. Each access is a new subscription.
    public var liveUpdates: AsyncStream<LiveUpdate> { liveConnection.updates.subscribe() }
}

extension VaneClient: LiveUpdateSubscriber {
    var streamConnection: ServerConnection { configuration.connection }
    var reconnectPolicy: BackoffPolicy { configuration.liveUpdates.reconnect }
    var streamIdleTimeout: TimeInterval { configuration.liveUpdates.idleTimeout }
    var streamLogger: Logger { configuration.logger }
    var clock: SDKClock { configuration.clock }

    /// Fetches (bypassing the minimum fetch interval, honouring backoff) and applies the new
    /// values under the live-update policy, reporting them on ``liveUpdates``.
    func catchUp() async throws(VaneError) -> LiveCatchUpResult {
        switch try await fetch(minimumInterval: 0) {
        case .fetched(let version):
            if let update = applyLiveUpdate(policy: configuration.liveUpdates.policy) {
                liveConnection.updates.send(update)
            }
            return .fetched(templateVersion: version)
        case .noChange:
            return .noChange
        case .notDue:
            return .notDue
        }
    }
}
