/// How `vane serve` runs.
public struct ServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (tests).
    public var port: Int = 8080
    /// Where the embedded SQLite database lives.
    public var dataDirectory: String = ".vane"
    /// A PostgreSQL URL, for several nodes; nil uses SQLite in ``dataDirectory``.
    public var databaseURL: String?
    /// An admin key to accept (created if missing); without one, the first start creates and prints one.
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

    /// The default configuration: 127.0.0.1:8080, SQLite under `./.vane/`.
    public init() {}

    /// The database this configuration names.
    public var databaseLocation: DatabaseLocation {
        if let databaseURL { return DatabaseLocation(argument: databaseURL) }
        return .sqlite(path: dataDirectory + "/vane.sqlite")
    }
}
