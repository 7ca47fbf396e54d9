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
            VANE_DATABASE, VANE_ADMIN_KEY, VANE_RATE_LIMIT, VANE_RETAIN_VERSIONS, VANE_LOG_LEVEL.
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

    @Flag(name: .customLong("no-demo"), help: "Do not create the demo project on the first start.")
    var noDemo = false

    func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be from 0 to 65535") }
        if let rateLimit, rateLimit < 0 { throw ValidationError("--rate-limit must not be negative") }
        if let retainVersions, retainVersions < 1 { throw ValidationError("--retain-versions must be at least 1") }
        if let streamHeartbeat, !(0.05...3600).contains(streamHeartbeat) {
            throw ValidationError("--stream-heartbeat must be from 0.05 to 3600 seconds")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration = ServerConfiguration()
        configuration.host = host ?? environment["VANE_HOST"] ?? configuration.host
        configuration.port = try port ?? Self.integer(environment["VANE_PORT"], name: "VANE_PORT") ?? configuration.port
        configuration.dataDirectory = dataDirectory ?? environment["VANE_DATA_DIR"] ?? configuration.dataDirectory
        configuration.databaseURL = database ?? environment["VANE_DATABASE"]
        configuration.adminKey = adminKey ?? environment["VANE_ADMIN_KEY"]
        if let rate = rateLimit ?? environment["VANE_RATE_LIMIT"].flatMap(Double.init) {
            configuration.rateLimit = rate
        }
        configuration.retainedVersions =
            try retainVersions ?? Self.integer(environment["VANE_RETAIN_VERSIONS"], name: "VANE_RETAIN_VERSIONS")
        configuration.createsDemoProject = !noDemo
        if let heartbeat = streamHeartbeat ?? environment["VANE_STREAM_HEARTBEAT"].flatMap(Double.init) {
            configuration.streamHeartbeatSeconds = heartbeat
        }

        let level = environment["VANE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
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

    static func integer(_ text: String?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text) else { throw ValidationError("\(name) must be a whole number, found \"\(text)\"") }
        return value
    }

    static func printBanner(host: String, port: Int, database: String, report: VaneServerApplication.FirstStartReport) {
        let url = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        var lines = ["Vane is serving at \(url) (data: \(database))"]
        if let adminKey = report.adminKey {
            lines.append("Admin key (shown once; keep it safe): \(adminKey)")
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
