/// How `vane serve` runs.
///
/// Whatever sets it — command-line options, `VANE_*` environment variables, an embedding app —
/// ``validate()`` checks the merged result once, and ``VaneServerApplication/start(configuration:logger:)``
/// refuses to start with a configuration that does not pass.
public struct ServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (tests).
    public var port: Int = 8080
    /// Where the embedded SQLite database lives.
    public var dataDirectory: String = ".vane"
    /// A PostgreSQL URL, for several nodes; nil uses SQLite in ``dataDirectory``.
    public var databaseURL: String?
    /// An admin key to accept (created if missing); without one, the first start creates one.
    public var adminKey: String?
    /// Requests per second per key on fetch and OFREP; 0 turns limiting off.
    public var rateLimit: Double = 200
    /// How many versions to keep per environment; nil keeps every version.
    public var retainedVersions: Int?
    /// Whether the first start creates the `demo` project.
    public var createsDemoProject = true
    /// Seconds between heartbeat comments on `…/stream` connections.
    public var streamHeartbeatSeconds: Double = 15
    /// How often a node checks the database for versions published by other nodes, in milliseconds.
    public var pollIntervalMilliseconds: Int64 = 2000
    /// Seconds a connection may stay silent — idle between requests, or sending a request head
    /// that never completes — before the server closes it. Event streams are not idle: the
    /// server writes to them.
    public var idleTimeoutSeconds: Double = 30
    /// The most connections open at once; further connections wait in the kernel's accept queue
    /// until one closes.
    public var maximumConnections: Int = 4096

    /// The default configuration: 127.0.0.1:8080, SQLite under `./.vane/`.
    public init() {}

    /// The database this configuration names.
    public var databaseLocation: DatabaseLocation {
        if let databaseURL { return DatabaseLocation(argument: databaseURL) }
        return .sqlite(path: dataDirectory + "/vane.sqlite")
    }

    /// A setting ``validate()`` can refuse.
    public enum Setting: String, Sendable, Hashable, CaseIterable {
        case host, port, dataDirectory, rateLimit, retainedVersions, streamHeartbeatSeconds
        case pollIntervalMilliseconds, idleTimeoutSeconds, maximumConnections
    }

    /// One setting that is out of range, and what it accepts.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The setting.
        public var setting: Setting
        /// What it must be and what it was, e.g. "must be from 0.05 to 3600 seconds, found -1".
        public var message: String

        /// "streamHeartbeatSeconds must be …".
        public var description: String { "\(setting.rawValue) \(message)" }
    }

    /// Checks every setting and reports every one that is out of range.
    /// - Throws: ``ServerConfigurationError`` listing each problem.
    public func validate() throws(ServerConfigurationError) {
        var problems: [Problem] = []
        func refuse(_ setting: Setting, _ message: String) {
            problems.append(Problem(setting: setting, message: message))
        }
        if host.isEmpty { refuse(.host, "must not be empty") }
        if !(0...65_535).contains(port) { refuse(.port, "must be from 0 to 65535, found \(port)") }
        if databaseURL == nil, dataDirectory.isEmpty { refuse(.dataDirectory, "must not be empty") }
        // A tiny rate divides a token into years and NaN compares false everywhere: both would
        // quietly turn limiting off or trap. 0 is the explicit "off".
        if !(rateLimit == 0 || (0.01...1_000_000).contains(rateLimit)) {
            refuse(.rateLimit, "must be 0 (off) or from 0.01 to 1000000 requests per second, found \(rateLimit)")
        }
        if let retainedVersions, retainedVersions < 1 {
            refuse(
                .retainedVersions,
                "must be at least 1 (0 would delete every version as it is published), found \(retainedVersions)"
            )
        }
        if !(0.05...3600).contains(streamHeartbeatSeconds) {
            refuse(.streamHeartbeatSeconds, "must be from 0.05 to 3600 seconds, found \(streamHeartbeatSeconds)")
        }
        if !(100...3_600_000).contains(pollIntervalMilliseconds) {
            refuse(
                .pollIntervalMilliseconds,
                "must be from 100 to 3600000 milliseconds, found \(pollIntervalMilliseconds)"
            )
        }
        if !(1...86_400).contains(idleTimeoutSeconds) {
            refuse(.idleTimeoutSeconds, "must be from 1 to 86400 seconds, found \(idleTimeoutSeconds)")
        }
        if !(16...1_000_000).contains(maximumConnections) {
            refuse(.maximumConnections, "must be from 16 to 1000000, found \(maximumConnections)")
        }
        if !problems.isEmpty { throw ServerConfigurationError(problems: problems) }
    }
}

/// A configuration ``ServerConfiguration/validate()`` refused: every setting out of range.
public struct ServerConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Each refused setting.
    public var problems: [ServerConfiguration.Problem]

    /// One line per problem.
    public var description: String {
        "the server configuration is not valid; fix these settings and start again:\n"
            + problems.map { "  \($0)" }.joined(separator: "\n")
    }
}
