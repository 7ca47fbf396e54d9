/// A change to the values the app reads.
public struct ConfigUpdate: Sendable, Hashable {
    /// Why values changed.
    public enum Reason: String, Sendable, Hashable {
        /// The app called `activate()` and fetched values replaced the active ones.
        case activation
        /// A local override was set or removed.
        case override
        /// A live update applied real-time keys at once.
        case liveUpdate
    }

    /// The keys whose value (or source) changed.
    public var changedKeys: Set<String>
    /// Why.
    public var reason: Reason
    /// The active template version after the change, if any remote config is active.
    public var templateVersion: Int64?

    /// Creates an update.
    /// - Parameters:
    ///   - changedKeys: The keys whose value (or source) changed.
    ///   - reason: Why they changed.
    ///   - templateVersion: The active template version after the change, if any.
    public init(changedKeys: Set<String>, reason: Reason, templateVersion: Int64?) {
        self.changedKeys = changedKeys
        self.reason = reason
        self.templateVersion = templateVersion
    }
}
