import Foundation
import Logging

/// What ``LiveUpdateConnection`` needs from the client it keeps current: where the stream is,
/// how to reconnect, which version the client holds, and how to catch up with a newer one.
///
/// ``VaneClient`` (fetch, then apply under its ``LiveApplyPolicy``) and ``LocalEvaluationClient``
/// (download the compiled template) both follow the same stream through it.
protocol LiveUpdateSubscriber: Sendable {
    /// How the client reaches the server: the stream is `GET …/stream` on this connection.
    var streamConnection: ServerConnection { get }
    /// The pauses between reconnection attempts.
    var reconnectPolicy: BackoffPolicy { get }
    /// The longest silence the stream may have before the client reconnects.
    var streamIdleTimeout: TimeInterval { get }
    /// Where disconnections are logged.
    var streamLogger: Logger { get }
    /// The time reconnection pauses are reckoned from, and the clock they wait on.
    var clock: SDKClock { get }
    /// The newest template version the client holds, or nil when it holds none.
    var heldTemplateVersion: Int64? { get }
    /// Fetches what the server has now (bypassing intervals, honouring backoff) and applies it.
    func catchUp() async throws(VaneError) -> LiveCatchUpResult
}

/// What one catch-up fetch of a ``LiveUpdateSubscriber`` found.
enum LiveCatchUpResult: Sendable, Hashable {
    /// A new version arrived and was applied.
    case fetched(templateVersion: Int64)
    /// The server confirmed that the client's version is current.
    case noChange
    /// The fetch joined one already under way that answered before it was due: ask again.
    case notDue
}
