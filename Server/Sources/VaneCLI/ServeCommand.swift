import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
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
            VANE_DATABASE, VANE_SQLITE_BUSY_TIMEOUT, VANE_ADMIN_KEY, VANE_ADMIN_KEY_FILE, VANE_RATE_LIMIT, VANE_ADDRESS_RATE_LIMIT, \
            VANE_KEY_RATE_LIMIT, VANE_EVENT_ADDRESS_RATE_LIMIT, VANE_EVENT_KEY_RATE_LIMIT, VANE_EVENT_QUOTA_PER_DAY, \
            VANE_EVENT_RETENTION_DAYS, VANE_TRUSTED_PROXIES (comma-separated), VANE_MAX_STREAMS_PER_KEY, \
            VANE_MAX_STREAMS_PER_ADDRESS, VANE_SECRET, VANE_SECRET_FILE, VANE_TLS_CERT, VANE_TLS_KEY, \
            VANE_METRICS_REQUIRE_KEY (1 or true), VANE_HEALTH_PORT, VANE_RETAIN_VERSIONS, VANE_STREAM_HEARTBEAT, \
            VANE_IDLE_TIMEOUT, VANE_MAX_CONNECTIONS, VANE_LOG_LEVEL (trace, debug, info, notice, warning, error, \
            critical). Options win over variables; whatever their source, settings out of range stop the \
            server before it starts, each named. Keys and secrets are better given as files or variables than \
            as options, which every user of the machine can read in the process list.
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

    @Option(
        name: .customLong("sqlite-busy-timeout"),
        help: "Seconds a write waits for another process's lock on the SQLite file before it answers 503 (default 5)."
    )
    var sqliteBusyTimeout: Double?

    @Option(
        name: .customLong("admin-key"),
        help: "Accept this admin key (stored hashed if new; at least 32 characters). Prefer --admin-key-file."
    )
    var adminKey: String?

    @Option(name: .customLong("admin-key-file"), help: "Accept the admin key in this file.")
    var adminKeyFile: String?

    @Option(
        name: .customLong("rate-limit"),
        help:
            "Fetch and OFREP requests per second per client: an address with one context (default 10; 0 turns it off)."
    )
    var rateLimit: Double?

    @Option(
        name: .customLong("address-rate-limit"),
        help: "Fetch and OFREP requests per second per client address (default 100; 0 turns it off)."
    )
    var addressRateLimit: Double?

    @Option(
        name: .customLong("key-rate-limit"),
        help: "Fetch and OFREP requests per second per key, all clients together (default 10000; 0 turns it off)."
    )
    var keyRateLimit: Double?

    @Option(
        name: .customLong("event-address-rate-limit"),
        help: "Event batches (POST …/events) per second per client address (default 100; 0 turns it off)."
    )
    var eventAddressRateLimit: Double?

    @Option(
        name: .customLong("event-key-rate-limit"),
        help: "Event batches per second per key, all clients together (default 10000; 0 turns it off)."
    )
    var eventKeyRateLimit: Double?

    @Option(
        name: .customLong("event-quota-per-day"),
        help: "Experiment events each environment may store per UTC day on this node (default 10000000; 0: no quota)."
    )
    var eventQuotaPerDay: Int?

    @Option(
        name: .customLong("trusted-proxy"),
        help: "A reverse proxy's address or CIDR range whose X-Forwarded-For is believed (repeat for several)."
    )
    var trustedProxies: [String] = []

    @Option(
        name: .customLong("max-streams-per-key"),
        help: "The most event streams one key may hold open (default 20000)."
    )
    var maxStreamsPerKey: Int?

    @Option(
        name: .customLong("max-streams-per-address"),
        help: "The most event streams one client address may hold open (default 64)."
    )
    var maxStreamsPerAddress: Int?

    @Option(
        name: .customLong("secret-file"),
        help: "The server secret that signs stream URLs (default: generated into the data directory)."
    )
    var secretFile: String?

    @Option(name: .customLong("tls-cert"), help: "Serve HTTPS with this PEM certificate chain (with --tls-key).")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Flag(name: .customLong("metrics-require-key"), help: "Answer /metrics only with an admin or server key.")
    var metricsRequireKey = false

    @Option(
        name: .customLong("health-port"),
        help: "Also answer /healthz, /readyz and /metrics on this port, outside the connection cap."
    )
    var healthPort: Int?

    @Option(
        name: .customLong("retain-versions"),
        help: "Keep only this many template versions per environment (default: all)."
    )
    var retainVersions: Int?

    @Option(
        name: .customLong("event-retention-days"),
        help: """
            Delete raw experiment events this many days after they were received (default 90, at least 31); \
            results keep counting them.
            """
    )
    var eventRetentionDays: Int?

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

    @Flag(name: .customLong("no-console"), help: "Do not serve the web console at /.")
    var noConsole = false

    @Option(
        name: .customLong("session-idle-minutes"),
        help: "Minutes without a request before a console session ends (default 720)."
    )
    var sessionIdleMinutes: Int?

    @Option(
        name: .customLong("session-lifetime-hours"),
        help: "Hours after sign-in before a console session ends (default 168)."
    )
    var sessionLifetimeHours: Int?

    @Option(
        name: .customLong("password-hash-cost"),
        help: "bcrypt cost for console passwords, 4 to 16 (default 12)."
    )
    var passwordHashCost: Int?

    func run() async throws {
        let (configuration, level) = try Self.merge(self, environment: ProcessInfo.processInfo.environment)
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, level: level) }
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
        if adminKey != nil {
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
        configuration.sqliteBusyTimeoutSeconds =
            try pick(
                options.sqliteBusyTimeout,
                "--sqlite-busy-timeout",
                "VANE_SQLITE_BUSY_TIMEOUT",
                .sqliteBusyTimeoutSeconds
            ) { Double($0) } ?? configuration.sqliteBusyTimeoutSeconds
        configuration.adminKey = try pick(options.adminKey, "--admin-key", "VANE_ADMIN_KEY", .adminKey) { $0 }
        if let file = try pick(options.adminKeyFile, "--admin-key-file", "VANE_ADMIN_KEY_FILE", .adminKey, { $0 }) {
            configuration.adminKey = try readSecretFile(file, option: "--admin-key-file")
        }
        configuration.secret = try pick(nil as String?, "", "VANE_SECRET", .secret) { $0 }
        if let file = try pick(options.secretFile, "--secret-file", "VANE_SECRET_FILE", .secret, { $0 }) {
            configuration.secret = try readSecretFile(file, option: "--secret-file")
        }
        configuration.rateLimit =
            try pick(options.rateLimit, "--rate-limit", "VANE_RATE_LIMIT", .rateLimit) { Double($0) }
            ?? configuration.rateLimit
        configuration.addressRateLimit =
            try pick(options.addressRateLimit, "--address-rate-limit", "VANE_ADDRESS_RATE_LIMIT", .addressRateLimit) {
                Double($0)
            } ?? configuration.addressRateLimit
        configuration.keyRateLimit =
            try pick(options.keyRateLimit, "--key-rate-limit", "VANE_KEY_RATE_LIMIT", .keyRateLimit) { Double($0) }
            ?? configuration.keyRateLimit
        configuration.eventAddressRateLimit =
            try pick(
                options.eventAddressRateLimit,
                "--event-address-rate-limit",
                "VANE_EVENT_ADDRESS_RATE_LIMIT",
                .eventAddressRateLimit
            ) { Double($0) } ?? configuration.eventAddressRateLimit
        configuration.eventKeyRateLimit =
            try pick(
                options.eventKeyRateLimit,
                "--event-key-rate-limit",
                "VANE_EVENT_KEY_RATE_LIMIT",
                .eventKeyRateLimit
            ) { Double($0) } ?? configuration.eventKeyRateLimit
        configuration.eventQuotaPerDay =
            try pick(
                options.eventQuotaPerDay,
                "--event-quota-per-day",
                "VANE_EVENT_QUOTA_PER_DAY",
                .eventQuotaPerDay
            ) { Int($0) } ?? configuration.eventQuotaPerDay
        configuration.trustedProxies =
            try pick(
                options.trustedProxies.isEmpty ? nil : options.trustedProxies,
                "--trusted-proxy",
                "VANE_TRUSTED_PROXIES",
                .trustedProxies
            ) { text in text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        configuration.maximumStreamsPerKey =
            try pick(
                options.maxStreamsPerKey,
                "--max-streams-per-key",
                "VANE_MAX_STREAMS_PER_KEY",
                .maximumStreamsPerKey
            ) {
                Int($0)
            } ?? configuration.maximumStreamsPerKey
        configuration.maximumStreamsPerAddress =
            try pick(
                options.maxStreamsPerAddress,
                "--max-streams-per-address",
                "VANE_MAX_STREAMS_PER_ADDRESS",
                .maximumStreamsPerAddress
            ) { Int($0) } ?? configuration.maximumStreamsPerAddress
        configuration.tlsCertificatePath =
            try pick(options.tlsCertificate, "--tls-cert", "VANE_TLS_CERT", .tlsCertificatePath) { $0 }
        configuration.tlsKeyPath = try pick(options.tlsKey, "--tls-key", "VANE_TLS_KEY", .tlsKeyPath) { $0 }
        let metricsVariable = try pick(nil as Bool?, "", "VANE_METRICS_REQUIRE_KEY", nil) {
            ["1", "true"].contains($0.lowercased())
        }
        configuration.metricsRequireKey = options.metricsRequireKey || metricsVariable == true
        configuration.healthPort = try pick(options.healthPort, "--health-port", "VANE_HEALTH_PORT", .healthPort) {
            Int($0)
        }
        configuration.retainedVersions =
            try pick(options.retainVersions, "--retain-versions", "VANE_RETAIN_VERSIONS", .retainedVersions) { Int($0) }
        configuration.eventRetentionDays =
            try pick(
                options.eventRetentionDays,
                "--event-retention-days",
                "VANE_EVENT_RETENTION_DAYS",
                .eventRetentionDays
            ) { Int($0) } ?? configuration.eventRetentionDays
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
        configuration.consoleEnabled = !options.noConsole
        configuration.sessionIdleMinutes =
            try pick(
                options.sessionIdleMinutes,
                "--session-idle-minutes",
                "VANE_SESSION_IDLE_MINUTES",
                .sessionIdleMinutes
            ) {
                Int($0)
            } ?? configuration.sessionIdleMinutes
        configuration.sessionLifetimeHours =
            try pick(
                options.sessionLifetimeHours,
                "--session-lifetime-hours",
                "VANE_SESSION_LIFETIME_HOURS",
                .sessionLifetimeHours
            ) { Int($0) } ?? configuration.sessionLifetimeHours
        configuration.passwordHashCost =
            try pick(options.passwordHashCost, "--password-hash-cost", "VANE_PASSWORD_HASH_COST", .passwordHashCost) {
                Int($0)
            } ?? configuration.passwordHashCost
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
                "  \(source[problem.setting] ?? flagNames[problem.setting] ?? problem.setting.rawValue) \(problem.message)"
            }
            throw InputError(
                "vane serve: these settings are out of range; nothing was started:\n" + lines.joined(separator: "\n")
            )
        }
        return (configuration, level)
    }

    /// The option that sets a setting, for a problem with a setting nobody gave (the missing
    /// half of a pair).
    static let flagNames: [ServerConfiguration.Setting: String] = [
        .tlsCertificatePath: "--tls-cert", .tlsKeyPath: "--tls-key",
    ]

    /// The first line of a key or secret file, trimmed.
    static func readSecretFile(_ path: String, option: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("vane serve: cannot read \(option) \(path); check the path and its permissions")
        }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(whereSeparator: \.isNewline).first ?? "").trimmingCharacters(in: .whitespaces)
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
