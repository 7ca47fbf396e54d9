import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import VaneServer
import VaneServerCore

/// `vane serve`: the Vane server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Vane server: admin API, client fetch and OFREP.",
        usage: "vane serve [--option value ...]",
        discussion: """
            With no options: listens on 127.0.0.1:8080, keeps its data in an SQLite database under ./.vane/, \
            and on the first start creates a demo project and prints a new admin key and client key, once. \
            Each option can also be set with the environment variable after it; options win over variables. \
            Whatever their source, settings out of range stop the server before it starts, each named. Keys \
            and secrets are better given as files or variables than as options, which every user of the \
            machine can read in the process list.

            SETTINGS:

            """ + ServeSettings.help
    )

    /// The settings as given, parsed by ``ServeSettings`` (which declares each once).
    @Argument(parsing: .allUnrecognized, help: .private)
    var settings: [String] = []

    func run() async throws {
        let values = try ServeSettings.values(arguments: settings, environment: ProcessInfo.processInfo.environment)
        let configuration = values.configuration
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, level: values.logLevel) }
        // The process's metrics backend: the server library records through swift-metrics and
        // leaves bootstrapping to its host, here and in any app that embeds it.
        let metrics = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics))
        let logger = Logger(label: "vane")
        let server: VaneServerApplication
        do {
            server = try await VaneServerApplication.start(
                configuration: configuration,
                metrics: metrics,
                logger: logger
            )
        } catch {
            throw InputError("vane serve: \(error)")
        }
        if settings.contains(where: { $0 == "--admin-key" || $0.hasPrefix("--admin-key=") }) {
            logger.warning(
                "--admin-key is visible to every user of this machine in the process list; prefer --admin-key-file or VANE_ADMIN_KEY"
            )
        }
        let location = configuration.databaseLocation.description
        let report = server.firstStart
        let host = configuration.host
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let console = configuration.consoleEnabled
        try await server.run { port in
            Self.printBanner(
                scheme: scheme,
                host: host,
                port: port,
                database: location,
                report: report,
                console: console
            )
        }
    }

    static func printBanner(
        scheme: String = "http",
        host: String,
        port: Int,
        database: String,
        report: VaneServerApplication.FirstStartReport,
        console: Bool = true
    ) {
        let url = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        var lines = ["Vane is serving at \(url) (data: \(database))"]
        if console { lines.append("Console: \(url)/") }
        if let password = report.consoleAdminPassword, console {
            if let file = report.consoleAdminPasswordFile {
                lines.append(
                    "Console sign-in: email \(VaneServerApplication.firstAdminEmail), one-time password in \(file) (readable only by this user)"
                )
            }
            if isatty(STDOUT_FILENO) == 1 || report.consoleAdminPasswordFile == nil {
                lines.append("Console one-time password (shown once): \(password)")
            }
        }
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
