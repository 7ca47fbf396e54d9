public import Foundation

/// A new template version reached the client through live updates, and its values were fetched.
public struct LiveUpdate: Sendable, Hashable {
    /// The version fetched.
    public var templateVersion: Int64
    /// Keys whose fetched value differs from the value that was active.
    public var updatedKeys: Set<String>
    /// Updated keys activated at once, under the ``LiveApplyPolicy``.
    public var appliedKeys: Set<String>
    /// Updated keys waiting for ``VaneClient/activate()``.
    public var pendingKeys: Set<String>

    /// Creates an update.
    /// - Parameters:
    ///   - templateVersion: The version fetched.
    ///   - updatedKeys: Keys whose fetched value differs from the active one.
    ///   - appliedKeys: Updated keys activated at once.
    ///   - pendingKeys: Updated keys waiting for ``VaneClient/activate()``.
    public init(templateVersion: Int64, updatedKeys: Set<String>, appliedKeys: Set<String>, pendingKeys: Set<String>) {
        self.templateVersion = templateVersion
        self.updatedKeys = updatedKeys
        self.appliedKeys = appliedKeys
        self.pendingKeys = pendingKeys
    }
}

/// Where the live-update connection stands.
public enum LiveUpdateState: Sendable, Hashable, CustomStringConvertible {
    /// Live updates are not running: never started, or stopped.
    case stopped
    /// Paused by the app (in the background, say); ``VaneClient/resumeLiveUpdates()`` reconnects.
    case paused
    /// Opening the stream; `attempt` counts the failures since the last open stream.
    case connecting(attempt: Int)
    /// The stream is open: new versions arrive as they are published.
    case connected
    /// The stream failed or ended; the next attempt starts at `retryAt`.
    case waitingToReconnect(attempt: Int, retryAt: Date, reason: String)

    /// The state in words.
    public var description: String {
        switch self {
        case .stopped: return "stopped"
        case .paused: return "paused"
        case .connecting(let attempt): return attempt == 0 ? "connecting" : "connecting (attempt \(attempt + 1))"
        case .connected: return "connected"
        case .waitingToReconnect(_, let retryAt, let reason):
            return "disconnected (\(reason)); reconnecting at \(VaneError.format(retryAt))"
        }
    }
}
