import ArgumentParser
import Foundation
import Logging
import VaneServer

/// `vane serve`: the Vane server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Vane server: admin API, client fetch and OFREP.",
        discussion: """
            With no options: listens on 127.0.0.1:8080, keeps its data in an SQLite database under ./.vane/, \
            and on the first start creates a demo project and prints a new admin key and client key, once. \
            Every option can also be set with an environment variable: VANE_HOST, VANE_PORT, VANE_DATA_DIR, \
            VANE_DATABASE, VANE_ADMIN_KEY, VANE_RATE_LIMIT, VANE_RETAIN_VERSIONS, VANE_STREAM_HEARTBEAT, \
            VANE_IDLE_TIMEOUT, VANE_MAX_CONNECTIONS, VANE_LOG_LEVEL (trace, debug, info, notice, warning, error, \
            critical). Options win over variables; whatever their source, settings out of range stop the \
            server before it starts, each named.
            """
    )

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (default 8080; 0 picks a free port).")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Where the embedded SQLite database lives (default ./.vane).")
    var dataDirectory: String?

    @Option(help: "A postgres://user:password@host:port/database URL, to share one database between several nodes.")
    var database: String?

    @Option(name: .customLong("admin-key"), help: "Accept this admin key (it is stored hashed if new).")
    var adminKey: String?

    @Option(
        name: .customLong("rate-limit"),
        help: "Fetch and OFREP requests per second per key (default 200; 0 turns limiting off)."
    )
    var rateLimit: Double?

    @Option(
        name: .customLong("retain-versions"),
        help: "Keep only this many template versions per environment (default: all)."
    )
    var retainVersions: Int?

    @Option(
        name: .customLong("stream-heartbeat"),
        help: "Seconds between heartbeat comments on event streams (default 15)."
    )
    var streamHeartbeat: Double?

    @Option(
        name: .customLong("idle-timeout"),
        help: "Seconds a connection may stay silent before it is closed (default 30)."
    )
    var idleTimeout: Double?

    @Option(
        name: .customLong("max-connections"),
        help: "The most connections open at once (default 4096)."
    )
    var maxConnections: Int?

    @Flag(name: .customLong("no-demo"), help: "Do not create the demo project on the first start.")
    var noDemo = false

    func run() async throws {
        let (configuration, level) = try Self.merge(self, environment: ProcessInfo.processInfo.environment)
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, level: level) }
        let logger = Logger(label: "vane")
        let server: VaneServerApplication
        do {
            server = try await VaneServerApplication.start(configuration: configuration, logger: logger)
        } catch {
            throw InputError("vane serve: \(error)")
        }
        let location = configuration.databaseLocation.description
        let report = server.firstStart
        let host = configuration.host
        try await server.run { port in
            Self.printBanner(host: host, port: port, database: location, report: report)
        }
    }

    /// The configuration from options, then `VANE_*` variables, then defaults, validated once
    /// whatever the source; a refused setting is named the way it was given.
    static func merge(
        _ options: ServeCommand,
        environment: [String: String]
    ) throws -> (ServerConfiguration, Logger.Level) {
        var configuration = ServerConfiguration()
        var source: [ServerConfiguration.Setting: String] = [:]
        func pick<T>(
            _ option: T?,
            _ flag: String,
            _ variable: String,
            _ setting: ServerConfiguration.Setting?,
            _ parse: (String) -> T?
        ) throws -> T? {
            if let option {
                if let setting { source[setting] = flag }
                return option
            }
            guard let text = environment[variable] else { return nil }
            guard let value = parse(text) else {
                throw InputError(
                    "vane serve: \(variable) must be \(T.self == Int.self ? "a whole number" : "a number"), found \"\(text)\""
                )
            }
            if let setting { source[setting] = variable }
            return value
        }
        // Double's parser takes "nan" and "inf"; validation below refuses them with the rest.
        configuration.host = try pick(options.host, "--host", "VANE_HOST", .host) { $0 } ?? configuration.host
        configuration.port = try pick(options.port, "--port", "VANE_PORT", .port) { Int($0) } ?? configuration.port
        configuration.dataDirectory =
            try pick(options.dataDirectory, "--data-dir", "VANE_DATA_DIR", .dataDirectory) { $0 }
            ?? configuration.dataDirectory
        configuration.databaseURL = try pick(options.database, "--database", "VANE_DATABASE", nil) { $0 }
        configuration.adminKey = try pick(options.adminKey, "--admin-key", "VANE_ADMIN_KEY", nil) { $0 }
        configuration.rateLimit =
            try pick(options.rateLimit, "--rate-limit", "VANE_RATE_LIMIT", .rateLimit) { Double($0) }
            ?? configuration.rateLimit
        configuration.retainedVersions =
            try pick(options.retainVersions, "--retain-versions", "VANE_RETAIN_VERSIONS", .retainedVersions) { Int($0) }
        configuration.streamHeartbeatSeconds =
            try pick(options.streamHeartbeat, "--stream-heartbeat", "VANE_STREAM_HEARTBEAT", .streamHeartbeatSeconds) {
                Double($0)
            } ?? configuration.streamHeartbeatSeconds
        configuration.idleTimeoutSeconds =
            try pick(options.idleTimeout, "--idle-timeout", "VANE_IDLE_TIMEOUT", .idleTimeoutSeconds) { Double($0) }
            ?? configuration.idleTimeoutSeconds
        configuration.maximumConnections =
            try pick(options.maxConnections, "--max-connections", "VANE_MAX_CONNECTIONS", .maximumConnections) {
                Int($0)
            } ?? configuration.maximumConnections
        configuration.createsDemoProject = !options.noDemo
        var level = Logger.Level.info
        if let text = environment["VANE_LOG_LEVEL"] {
            guard let chosen = Logger.Level(rawValue: text) else {
                let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw InputError("vane serve: VANE_LOG_LEVEL must be one of \(levels), found \"\(text)\"")
            }
            level = chosen
        }
        do {
            try configuration.validate()
        } catch {
            let lines = error.problems.map { problem in
                "  \(source[problem.setting] ?? problem.setting.rawValue) \(problem.message)"
            }
            throw InputError(
                "vane serve: these settings are out of range; nothing was started:\n" + lines.joined(separator: "\n")
            )
        }
        return (configuration, level)
    }

    static func printBanner(host: String, port: Int, database: String, report: VaneServerApplication.FirstStartReport) {
        let url = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        var lines = ["Vane is serving at \(url) (data: \(database))"]
        if let adminKey = report.adminKey {
            // Container platforms keep standard output in their logs: the key itself is shown
            // only on a terminal; its file (0600) is there either way.
            if let file = report.adminKeyFile {
                lines.append(
                    "Admin key written to \(file) (readable only by this user); delete the file once it is kept safe"
                )
            }
            if isatty(STDOUT_FILENO) == 1 || report.adminKeyFile == nil {
                lines.append("Admin key (shown once; keep it safe): \(adminKey)")
            }
        }
        if let clientKey = report.demoClientKey {
            lines.append("Client key for the demo project's production environment (shown once): \(clientKey)")
            lines.append("Try it:")
            lines.append(
                "  curl -s -X POST \(url)/v1/projects/demo/environments/production/fetch -H 'Authorization: Bearer \(clientKey)' "
                    + #"-d '{"context": {"randomizationId": "user-1", "device.country": "de"}}'"#
            )
        }
        // Written straight to the file descriptor, so it shows at once even when stdout is a pipe.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
