import Foundation
import Logging
import VaneOIDC
import VaneServer

/// What `vane serve`'s settings produce: the server's configuration and the log level.
struct ServeValues: Sendable {
    var configuration = ServerConfiguration()
    var logLevel = Logger.Level.info
}

/// One `vane serve` setting, declared once: its option, its environment variable, its help, and
/// how its text sets a ``ServerConfiguration`` field. The field's default and range check live
/// in `ServerConfiguration` (an embedding app gets them too); `--help`, parsing and the names in
/// error messages all come from ``ServeSettings/all``.
struct ServeSetting: Sendable {
    /// How the option takes its value.
    enum Arity: Sendable, Equatable {
        /// `--port 8080`; the value's name for the help, e.g. `port`.
        case value(String)
        /// `--trusted-proxy A --trusted-proxy B`; a variable holds them comma-separated.
        case repeated(String)
        /// `--no-demo`; a variable is on when it is `1` or `true`.
        case flag
    }

    /// `--port`; nil for a setting only a variable sets.
    var option: String?
    /// `VANE_PORT`; nil for a setting only an option sets.
    var variable: String?
    var arity: Arity
    /// One sentence for `vane serve --help`, with the default.
    var help: String
    /// The configuration setting whose problems name this option or variable.
    var setting: ServerConfiguration.Setting?
    /// Sets the value from the texts given (several for a repeated option), naming the option or
    /// variable they came from in an error.
    var apply: @Sendable (_ values: inout ServeValues, _ texts: [String], _ source: String) throws -> Void

    /// A value that is parsed from its text, or refused with what was expected.
    protocol Value: Sendable {
        init?(settingText: String)
        /// "a whole number".
        static var expected: String { get }
    }

    /// A field of a type with a text form.
    static func field<T: Value>(
        _ option: String?,
        _ variable: String?,
        _ field: any WritableKeyPath<ServerConfiguration, T> & Sendable,
        name: String,
        setting: ServerConfiguration.Setting?,
        help: String
    ) -> ServeSetting {
        ServeSetting(option: option, variable: variable, arity: .value(name), help: help, setting: setting) {
            values,
            texts,
            source in
            values.configuration[keyPath: field] = try parse(texts, source: source)
        }
    }

    /// An optional field: unset unless given.
    static func field<T: Value>(
        _ option: String?,
        _ variable: String?,
        _ field: any WritableKeyPath<ServerConfiguration, T?> & Sendable,
        name: String,
        setting: ServerConfiguration.Setting?,
        help: String
    ) -> ServeSetting {
        ServeSetting(option: option, variable: variable, arity: .value(name), help: help, setting: setting) {
            values,
            texts,
            source in
            values.configuration[keyPath: field] = try parse(texts, source: source) as T
        }
    }

    /// A flag that sets a Boolean field to `value`.
    static func flag(
        _ option: String?,
        _ variable: String?,
        _ field: any WritableKeyPath<ServerConfiguration, Bool> & Sendable,
        to value: Bool,
        setting: ServerConfiguration.Setting? = nil,
        help: String
    ) -> ServeSetting {
        ServeSetting(option: option, variable: variable, arity: .flag, help: help, setting: setting) {
            values,
            texts,
            _ in
            // A variable that is neither 1 nor true leaves the default, as it always has.
            if texts.allSatisfy({ ["1", "true"].contains($0.lowercased()) }) {
                values.configuration[keyPath: field] = value
            }
        }
    }

    /// A secret read from the first line of a file.
    static func secretFile(
        _ option: String,
        _ variable: String,
        _ field: any WritableKeyPath<ServerConfiguration, String?> & Sendable,
        setting: ServerConfiguration.Setting,
        help: String
    ) -> ServeSetting {
        ServeSetting(option: option, variable: variable, arity: .value("file"), help: help, setting: setting) {
            values,
            texts,
            source in
            values.configuration[keyPath: field] = try readSecretFile(texts.last ?? "", source: source)
        }
    }

    /// The last text, parsed: options and variables given twice keep the last.
    static func parse<T: Value>(_ texts: [String], source: String) throws -> T {
        let text = texts.last ?? ""
        guard let value = T(settingText: text) else {
            throw InputError("vane serve: \(source) must be \(T.expected), found \"\(text)\"")
        }
        return value
    }

    /// The first line of a key or secret file, trimmed.
    static func readSecretFile(_ path: String, source: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("vane serve: cannot read \(source) \(path); check the path and its permissions")
        }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(whereSeparator: \.isNewline).first ?? "").trimmingCharacters(in: .whitespaces)
    }
}

extension String: ServeSetting.Value {
    init?(settingText: String) { self = settingText }
    static var expected: String { "text" }
}

extension Int: ServeSetting.Value {
    init?(settingText: String) { self.init(settingText) }
    static var expected: String { "a whole number" }
}

extension Double: ServeSetting.Value {
    // Double's parser takes "nan" and "inf"; the configuration's range check refuses them.
    init?(settingText: String) { self.init(settingText) }
    static var expected: String { "a number" }
}

/// Every `vane serve` setting, in the order `--help` lists them.
enum ServeSettings {
    static let all: [ServeSetting] = [
        .field(
            "--host",
            "VANE_HOST",
            \.host,
            name: "address",
            setting: .host,
            help: "The address to listen on (default 127.0.0.1)."
        ),
        .field(
            "--port",
            "VANE_PORT",
            \.port,
            name: "port",
            setting: .port,
            help: "The port to listen on (default 8080; 0 picks a free port)."
        ),
        .field(
            "--data-dir",
            "VANE_DATA_DIR",
            \.dataDirectory,
            name: "directory",
            setting: .dataDirectory,
            help: "Where the embedded SQLite database lives (default ./.vane)."
        ),
        .field(
            "--database",
            "VANE_DATABASE",
            \.databaseURL,
            name: "url",
            setting: nil,
            help: "A postgres://user:password@host:port/database URL, to share one database between several nodes."
        ),
        .field(
            "--sqlite-busy-timeout",
            "VANE_SQLITE_BUSY_TIMEOUT",
            \.sqliteBusyTimeoutSeconds,
            name: "seconds",
            setting: .sqliteBusyTimeoutSeconds,
            help:
                "Seconds a write waits for another process's lock on the SQLite file before it answers 503 (default 5)."
        ),
        .field(
            "--admin-key",
            "VANE_ADMIN_KEY",
            \.adminKey,
            name: "key",
            setting: .adminKey,
            help: "Accept this admin key (stored hashed if new; at least 32 characters). Prefer --admin-key-file."
        ),
        .secretFile(
            "--admin-key-file",
            "VANE_ADMIN_KEY_FILE",
            \.adminKey,
            setting: .adminKey,
            help: "Accept the admin key in this file."
        ),
        .field(
            nil,
            "VANE_SECRET",
            \.secret,
            name: "secret",
            setting: .secret,
            help: "The server secret that signs stream URLs (at least 32 characters)."
        ),
        .secretFile(
            "--secret-file",
            "VANE_SECRET_FILE",
            \.secret,
            setting: .secret,
            help: "The server secret that signs stream URLs, in a file (default: generated into the data directory)."
        ),
        .field(
            "--rate-limit",
            "VANE_RATE_LIMIT",
            \.rateLimit,
            name: "per-second",
            setting: .rateLimit,
            help:
                "Fetch and OFREP requests per second per client: an address with one context (default 10; 0 turns it off)."
        ),
        .field(
            "--address-rate-limit",
            "VANE_ADDRESS_RATE_LIMIT",
            \.addressRateLimit,
            name: "per-second",
            setting: .addressRateLimit,
            help: "Fetch and OFREP requests per second per client address (default 100; 0 turns it off)."
        ),
        .field(
            "--key-rate-limit",
            "VANE_KEY_RATE_LIMIT",
            \.keyRateLimit,
            name: "per-second",
            setting: .keyRateLimit,
            help: "Fetch and OFREP requests per second per key, all clients together (default 10000; 0 turns it off)."
        ),
        .field(
            "--event-address-rate-limit",
            "VANE_EVENT_ADDRESS_RATE_LIMIT",
            \.eventAddressRateLimit,
            name: "per-second",
            setting: .eventAddressRateLimit,
            help: "Event batches (POST …/events) per second per client address (default 100; 0 turns it off)."
        ),
        .field(
            "--event-key-rate-limit",
            "VANE_EVENT_KEY_RATE_LIMIT",
            \.eventKeyRateLimit,
            name: "per-second",
            setting: .eventKeyRateLimit,
            help: "Event batches per second per key, all clients together (default 10000; 0 turns it off)."
        ),
        .field(
            "--event-quota-per-day",
            "VANE_EVENT_QUOTA_PER_DAY",
            \.eventQuotaPerDay,
            name: "events",
            setting: .eventQuotaPerDay,
            help:
                "Experiment events each environment may store per UTC day on this node (default 10000000; 0: no quota)."
        ),
        ServeSetting(
            option: "--trusted-proxy",
            variable: "VANE_TRUSTED_PROXIES",
            arity: .repeated("address"),
            help: "A reverse proxy's address or CIDR range whose X-Forwarded-For is believed (repeat for several).",
            setting: .trustedProxies
        ) { values, texts, _ in values.configuration.trustedProxies = texts },
        .field(
            "--max-streams-per-key",
            "VANE_MAX_STREAMS_PER_KEY",
            \.maximumStreamsPerKey,
            name: "count",
            setting: .maximumStreamsPerKey,
            help: "The most event streams one key may hold open (default 20000)."
        ),
        .field(
            "--max-streams-per-address",
            "VANE_MAX_STREAMS_PER_ADDRESS",
            \.maximumStreamsPerAddress,
            name: "count",
            setting: .maximumStreamsPerAddress,
            help: "The most event streams one client address may hold open (default 64)."
        ),
        .field(
            "--tls-cert",
            "VANE_TLS_CERT",
            \.tlsCertificatePath,
            name: "file",
            setting: .tlsCertificatePath,
            help: "Serve HTTPS with this PEM certificate chain (with --tls-key)."
        ),
        .field(
            "--tls-key",
            "VANE_TLS_KEY",
            \.tlsKeyPath,
            name: "file",
            setting: .tlsKeyPath,
            help: "The PEM private key of --tls-cert."
        ),
        .flag(
            "--metrics-require-key",
            "VANE_METRICS_REQUIRE_KEY",
            \.metricsRequireKey,
            to: true,
            help: "Answer /metrics only with an admin or server key."
        ),
        .field(
            "--health-port",
            "VANE_HEALTH_PORT",
            \.healthPort,
            name: "port",
            setting: .healthPort,
            help: "Also answer /healthz, /readyz and /metrics on this port, outside the connection cap."
        ),
        .field(
            "--retain-versions",
            "VANE_RETAIN_VERSIONS",
            \.retainedVersions,
            name: "count",
            setting: .retainedVersions,
            help: "Keep only this many template versions per environment (default: all)."
        ),
        .field(
            "--event-retention-days",
            "VANE_EVENT_RETENTION_DAYS",
            \.eventRetentionDays,
            name: "days",
            setting: .eventRetentionDays,
            help:
                "Delete raw experiment events this many days after they were received (default 90, at least 31); results keep counting them."
        ),
        .field(
            "--stream-heartbeat",
            "VANE_STREAM_HEARTBEAT",
            \.streamHeartbeatSeconds,
            name: "seconds",
            setting: .streamHeartbeatSeconds,
            help: "Seconds between heartbeat comments on event streams (default 15)."
        ),
        .field(
            "--idle-timeout",
            "VANE_IDLE_TIMEOUT",
            \.idleTimeoutSeconds,
            name: "seconds",
            setting: .idleTimeoutSeconds,
            help: "Seconds a connection may stay silent before it is closed (default 30)."
        ),
        .field(
            "--max-connections",
            "VANE_MAX_CONNECTIONS",
            \.maximumConnections,
            name: "count",
            setting: .maximumConnections,
            help: "The most connections open at once (default 4096)."
        ),
        .flag(
            "--no-demo",
            nil,
            \.createsDemoProject,
            to: false,
            help: "Do not create the demo project on the first start."
        ),
        .flag("--no-console", nil, \.consoleEnabled, to: false, help: "Do not serve the web console at /."),
        .flag(
            "--webhooks-allow-private-addresses",
            "VANE_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES",
            \.webhooksAllowPrivateAddresses,
            to: true,
            help:
                "Let webhook endpoints resolve to loopback, private or link-local addresses (refused by default: no SSRF)."
        ),
        .field(
            "--webhook-retry",
            "VANE_WEBHOOK_RETRY",
            \.webhookRetrySeconds,
            name: "seconds",
            setting: .webhookRetrySeconds,
            help:
                "Seconds before a failed webhook delivery is retried; doubles per failure up to 6 h, for 3 days (default 5)."
        ),
        .field(
            "--webhook-lease",
            "VANE_WEBHOOK_LEASE",
            \.webhookLeaseSeconds,
            name: "seconds",
            setting: .webhookLeaseSeconds,
            help: "Seconds a node holds a webhook delivery it sends before another node may take it over (default 60)."
        ),
        .field(
            "--schedule-grace",
            "VANE_SCHEDULE_GRACE",
            \.scheduleGraceSeconds,
            name: "seconds",
            setting: .scheduleGraceSeconds,
            help:
                "Seconds a scheduled change request may be late (no node ran at its time) and still apply; later it is suspended (default 3600)."
        ),
        .field(
            "--session-idle-minutes",
            "VANE_SESSION_IDLE_MINUTES",
            \.sessionIdleMinutes,
            name: "minutes",
            setting: .sessionIdleMinutes,
            help: "Minutes without a request before a console session ends (default 720)."
        ),
        .field(
            "--session-lifetime-hours",
            "VANE_SESSION_LIFETIME_HOURS",
            \.sessionLifetimeHours,
            name: "hours",
            setting: .sessionLifetimeHours,
            help: "Hours after sign-in before a console session ends (default 168)."
        ),
        .field(
            "--password-hash-cost",
            "VANE_PASSWORD_HASH_COST",
            \.passwordHashCost,
            name: "cost",
            setting: .passwordHashCost,
            help: "bcrypt cost for console passwords, 4 to 16 (default 12)."
        ),
        .field(
            "--oidc-issuer",
            "VANE_OIDC_ISSUER",
            \.singleSignOn.issuer,
            name: "url",
            setting: .oidcIssuer,
            help: "Console single sign-on: the OpenID Connect provider's issuer URL (turns single sign-on on)."
        ),
        .field(
            "--oidc-client-id",
            "VANE_OIDC_CLIENT_ID",
            \.singleSignOn.clientId,
            name: "id",
            setting: .oidcClientId,
            help: "The client id Vane is registered with at the provider."
        ),
        .field(
            nil,
            "VANE_OIDC_CLIENT_SECRET",
            \.singleSignOn.clientSecret,
            name: "secret",
            setting: .oidcClientSecret,
            help: "The client secret, for a confidential client (none: a public client with PKCE)."
        ),
        .secretFile(
            "--oidc-client-secret-file",
            "VANE_OIDC_CLIENT_SECRET_FILE",
            \.singleSignOn.clientSecret,
            setting: .oidcClientSecret,
            help: "The client secret, in a file."
        ),
        .field(
            "--oidc-redirect-url",
            "VANE_OIDC_REDIRECT_URL",
            \.singleSignOn.redirectURL,
            name: "url",
            setting: .oidcRedirectURL,
            help: "Where the provider sends people back: https://<this server>/sign-in/oidc/callback."
        ),
        .field(
            "--oidc-provider-name",
            "VANE_OIDC_PROVIDER_NAME",
            \.singleSignOn.providerName,
            name: "name",
            setting: nil,
            help: "The name on the sign-in button, \"Sign in with <name>\" (default: the issuer's host)."
        ),
        .field(
            "--oidc-scopes",
            "VANE_OIDC_SCOPES",
            \.singleSignOn.scopes,
            name: "scopes",
            setting: .oidcScopes,
            help: "The scopes asked for, space-separated (default \"openid email profile\")."
        ),
        ServeSetting(
            option: "--oidc-allowed-domain",
            variable: "VANE_OIDC_ALLOWED_DOMAINS",
            arity: .repeated("domain"),
            help: "An email domain whose people get a viewer account at their first sign-in (default: none).",
            setting: .oidcAllowedDomains
        ) { values, texts, _ in values.configuration.singleSignOn.allowedDomains = texts },
        .field(
            "--oidc-groups-claim",
            "VANE_OIDC_GROUPS_CLAIM",
            \.singleSignOn.groupsClaim,
            name: "claim",
            setting: .oidcGroupsClaim,
            help: "The ID-token claim listing a person's groups (groups, roles), read with --oidc-group-role."
        ),
        ServeSetting(
            option: "--oidc-group-role",
            variable: "VANE_OIDC_GROUP_ROLES",
            arity: .repeated("group=role"),
            help:
                "GROUP=viewer, GROUP=admin or GROUP=editor:project/environment: each sign-in sets roles from the groups.",
            setting: .oidcGroupRoles
        ) { values, texts, _ in values.configuration.singleSignOn.groupRoles = texts },
        .flag(
            "--no-password-sign-in",
            "VANE_NO_PASSWORD_SIGN_IN",
            \.passwordSignInDisabled,
            to: true,
            setting: .passwordSignInDisabled,
            help: "Console sign-in through the identity provider only (but for --break-glass-email)."
        ),
        .field(
            "--break-glass-email",
            "VANE_BREAK_GLASS_EMAIL",
            \.breakGlassEmail,
            name: "email",
            setting: .breakGlassEmail,
            help: "With --no-password-sign-in, the one admin account that still signs in with its password."
        ),
        ServeSetting(
            option: nil,
            variable: "VANE_LOG_LEVEL",
            arity: .value("level"),
            help: "The log level: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")) (default info).",
            setting: nil
        ) { values, texts, source in
            let text = texts.last ?? ""
            guard let level = Logger.Level(rawValue: text) else {
                let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw InputError("vane serve: \(source) must be one of \(levels), found \"\(text)\"")
            }
            values.logLevel = level
        },
    ]

    /// The settings from `arguments` (after `serve`), then `VANE_*` variables, then defaults,
    /// validated once whatever the source; a refused setting is named the way it was given.
    static func values(arguments: [String], environment: [String: String]) throws -> ServeValues {
        let options = try parse(arguments)
        var values = ServeValues()
        var source: [ServerConfiguration.Setting: String] = [:]
        // Variables first, then options: an option wins over its variable, which is then not read.
        for (index, setting) in all.enumerated() where options[index] == nil {
            guard let variable = setting.variable, let text = environment[variable] else { continue }
            let texts =
                isRepeated(setting)
                ? text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } : [text]
            try setting.apply(&values, texts, variable)
            if let configured = setting.setting { source[configured] = variable }
        }
        for (index, setting) in all.enumerated() {
            guard let option = setting.option, let texts = options[index] else { continue }
            try setting.apply(&values, texts, option)
            if let configured = setting.setting { source[configured] = option }
        }
        do {
            try values.configuration.validate()
        } catch {
            let lines = error.problems.map { problem in
                "  \(source[problem.setting] ?? name(of: problem.setting)) \(problem.message)"
            }
            throw InputError(
                "vane serve: these settings are out of range; nothing was started:\n" + lines.joined(separator: "\n")
            )
        }
        return values
    }

    /// The option (or variable) of a setting nobody gave, such as the missing half of a pair.
    static func name(of setting: ServerConfiguration.Setting) -> String {
        let declared = all.first { $0.setting == setting }
        return declared?.option ?? declared?.variable ?? setting.rawValue
    }

    private static func isRepeated(_ setting: ServeSetting) -> Bool {
        if case .repeated = setting.arity { return true }
        return false
    }

    /// Each given option's texts by its index in ``all``: `--name value` or `--name=value`.
    static func parse(_ arguments: [String]) throws -> [Int: [String]] {
        var given: [Int: [String]] = [:]
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let name = parts.first ?? argument
            guard argument.hasPrefix("--"), let index = all.firstIndex(where: { $0.option == name }) else {
                throw InputError(
                    "vane serve: unknown option or argument \"\(argument)\"; `vane serve --help` lists the options"
                )
            }
            switch all[index].arity {
            case .flag:
                guard parts.count == 1 else {
                    throw InputError("vane serve: \(name) takes no value, found \"\(argument)\"")
                }
                given[index] = []
            case .value, .repeated:
                guard let text = parts.count == 2 ? parts[1] : remaining.popFirst() else {
                    throw InputError("vane serve: \(name) needs a value")
                }
                given[index, default: []].append(text)
            }
        }
        return given
    }

    /// The settings for `vane serve --help`: each option with its value, variable and help.
    static var help: String {
        all.map { setting in
            let value: String
            switch setting.arity {
            case .value(let name), .repeated(let name): value = " <\(name)>"
            case .flag: value = ""
            }
            let names = [setting.option.map { $0 + value }, setting.variable.map { "$" + $0 }].compactMap { $0 }
            let repeated = isRepeated(setting) ? " (repeatable; the variable is comma-separated)" : ""
            return "  " + names.joined(separator: ", ") + "\n      " + setting.help + repeated
        }.joined(separator: "\n")
    }
}
