import Foundation
public import VaneOIDC
public import VaneServerCore

/// How `vane serve` runs.
///
/// Whatever sets it — command-line options, `VANE_*` environment variables, an embedding app —
/// ``validate()`` checks the merged result once, and ``VaneServerApplication/start(configuration:metrics:logger:)``
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
    /// Seconds a statement waits for another process's write lock on the SQLite file before it
    /// gives up (a publish then answers 503 with `Retry-After`). Not used with PostgreSQL.
    public var sqliteBusyTimeoutSeconds: Double = DatabaseEngine.defaultSQLiteBusyTimeoutSeconds
    /// An admin key to accept (created if missing); without one, the first start creates one.
    /// At least ``minimumAdminKeyLength`` characters, not a repetition of a few; when it changes,
    /// the key the previous value created is revoked.
    public var adminKey: String?
    /// Fetch and OFREP requests per second per client: one address with one evaluation context
    /// (one app installation, usually). 0 turns this limit off.
    public var rateLimit: Double = 10
    /// Fetch and OFREP requests per second per client address, whatever the context: many
    /// installations behind one NAT share it. 0 turns this limit off.
    public var addressRateLimit: Double = 100
    /// Fetch and OFREP requests per second per key: the ceiling over all clients of one app.
    /// 0 turns this limit off.
    public var keyRateLimit: Double = 10_000
    /// `POST …/events` requests per second per client address: events have a budget of their
    /// own, apart from fetch's, since a relay forwarding its users' events sends them all from
    /// one address. 0 turns this limit off.
    public var eventAddressRateLimit: Double = 100
    /// `POST …/events` requests per second per key, all clients together. 0 turns this limit off.
    public var eventKeyRateLimit: Double = 10_000
    /// Experiment events each environment may store per UTC day on each node (counted in
    /// memory: N nodes store up to N times this). 0: no quota.
    public var eventQuotaPerDay = 10_000_000
    /// Addresses (or CIDR ranges) of reverse proxies whose `X-Forwarded-For` is believed. Empty:
    /// the header is ignored and the client address is the connection's peer.
    public var trustedProxies: [String] = []
    /// The most event streams (`…/stream`, `/ofrep/v1/events`) one key may hold open on a node.
    public var maximumStreamsPerKey: Int = 20_000
    /// The most event streams one client address may hold open on a node.
    public var maximumStreamsPerAddress: Int = 64
    /// The server secret that signs OFREP stream tokens (at least 32 characters). Nil: read from
    /// `server-secret` in ``dataDirectory``, created there (mode 0600) on the first start. Nodes
    /// that share a PostgreSQL database need the same secret.
    public var secret: String?
    /// A PEM certificate chain: with ``tlsKeyPath``, the server speaks HTTPS itself.
    public var tlsCertificatePath: String?
    /// The PEM private key of ``tlsCertificatePath``.
    public var tlsKeyPath: String?
    /// Whether `GET /metrics` needs an admin or server key.
    public var metricsRequireKey = false
    /// A second port that answers only `/healthz`, `/readyz` and `/metrics`, outside the
    /// connection cap, so a health check still gets through when ``maximumConnections`` are
    /// open. Nil: no second port.
    public var healthPort: Int?
    /// How many versions to keep per environment; nil keeps every version.
    public var retainedVersions: Int?
    /// How many days raw experiment events are kept (at least 31: apps may send events up to 30
    /// days old, and a late exposure recounts its unit's stored events). Results do not need
    /// them: the sums are kept apart.
    public var eventRetentionDays = 90
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

    /// Whether webhook endpoints may resolve to loopback, private, link-local and other
    /// non-public addresses (a receiver on this machine or network). Off: such endpoints are
    /// refused when created and again before every delivery, so an endpoint cannot reach into the
    /// server's own network (SSRF).
    public var webhooksAllowPrivateAddresses = false
    /// Seconds before a failed webhook delivery is tried again the first time; the delay doubles
    /// with each failure (up to 6 hours, ±20 % jitter) for 3 days.
    public var webhookRetrySeconds: Double = 5
    /// Seconds a node holds a webhook delivery it is sending; a node that dies while sending
    /// leaves it to another node (or to its own restart, with PostgreSQL) after this. Longer than
    /// an endpoint's 15 s to answer.
    public var webhookLeaseSeconds: Double = 60
    /// Seconds a scheduled change request may be late and still apply (a node that was down at
    /// its time applies it on start within this); later, it is suspended with a reason.
    public var scheduleGraceSeconds: Double = 3600

    /// Whether `/` serves the web console (sign-in, flags, history, keys, people).
    public var consoleEnabled = true
    /// A console session ends after this many minutes without a request.
    public var sessionIdleMinutes = 720
    /// A console session ends this many hours after sign-in, however active.
    public var sessionLifetimeHours = 168
    /// bcrypt's cost for console passwords (2^cost rounds; 12 takes about a quarter of a second).
    public var passwordHashCost = 12
    /// The console's single sign-on through an OpenID Connect provider; off until its issuer is set.
    public var singleSignOn = SingleSignOnSettings()
    /// Whether password sign-in is turned off (single sign-on only), except for
    /// ``breakGlassEmail``. Needs ``singleSignOn``.
    public var passwordSignInDisabled = false
    /// The one admin account that still signs in with its password when
    /// ``passwordSignInDisabled`` is set (for when the identity provider is down).
    public var breakGlassEmail: String?

    /// Whether the rollout guard decides on its own, as a service (always, in a deployment). A
    /// test that replays a rollout look by look turns it off and calls its passes itself: a
    /// pass the service started late would read one look's events at the next look's time.
    package var runsRolloutGuard = true

    /// Who may sign in with a password, as these settings say.
    package var passwordSignIn: PasswordSignIn {
        guard passwordSignInDisabled else { return .everyone }
        return breakGlassEmail.map { .breakGlassOnly(email: $0.trimmingCharacters(in: .whitespaces).lowercased()) }
            ?? .nobody
    }

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
        case adminKey, addressRateLimit, keyRateLimit, trustedProxies, maximumStreamsPerKey
        case maximumStreamsPerAddress, secret, tlsCertificatePath, tlsKeyPath, healthPort
        case sessionIdleMinutes, sessionLifetimeHours, passwordHashCost, eventRetentionDays
        case eventAddressRateLimit, eventKeyRateLimit, eventQuotaPerDay, sqliteBusyTimeoutSeconds
        case webhookRetrySeconds, webhookLeaseSeconds, scheduleGraceSeconds
        case oidcIssuer, oidcClientId, oidcClientSecret, oidcRedirectURL, oidcScopes, oidcAllowedDomains
        case oidcGroupsClaim, oidcGroupRoles, passwordSignInDisabled, breakGlassEmail
    }

    /// The shortest admin key ``validate()`` accepts: generated keys are 40 or more characters.
    public static let minimumAdminKeyLength = 32
    /// The shortest server secret ``validate()`` accepts.
    public static let minimumSecretLength = ServerSecret.minimumLength

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
        let rates: [(Setting, Double)] = [
            (.rateLimit, rateLimit), (.addressRateLimit, addressRateLimit), (.keyRateLimit, keyRateLimit),
            (.eventAddressRateLimit, eventAddressRateLimit), (.eventKeyRateLimit, eventKeyRateLimit),
        ]
        for (setting, rate) in rates where !(rate == 0 || (0.01...1_000_000).contains(rate)) {
            refuse(setting, "must be 0 (off) or from 0.01 to 1000000 requests per second, found \(rate)")
        }
        if let adminKey, let problem = Self.weakness(ofSecret: adminKey, minimumLength: Self.minimumAdminKeyLength) {
            refuse(.adminKey, problem + "; let the first start generate one, or use `openssl rand -hex 32`")
        }
        if let secret, let problem = Self.weakness(ofSecret: secret, minimumLength: Self.minimumSecretLength) {
            refuse(.secret, problem + "; use `openssl rand -hex 32`")
        }
        for proxy in trustedProxies where AddressRange(proxy) == nil {
            refuse(.trustedProxies, "must list IP addresses or CIDR ranges (10.0.0.0/8, ::1), found \"\(proxy)\"")
        }
        if !(1...10_000_000).contains(maximumStreamsPerKey) {
            refuse(.maximumStreamsPerKey, "must be from 1 to 10000000, found \(maximumStreamsPerKey)")
        }
        if !(1...10_000_000).contains(maximumStreamsPerAddress) {
            refuse(.maximumStreamsPerAddress, "must be from 1 to 10000000, found \(maximumStreamsPerAddress)")
        }
        switch (tlsCertificatePath, tlsKeyPath) {
        case (nil, nil), (.some, .some): break
        case (.some, nil): refuse(.tlsKeyPath, "must be given with a TLS certificate")
        case (nil, .some): refuse(.tlsCertificatePath, "must be given with a TLS key")
        }
        if let healthPort, !(0...65_535).contains(healthPort) || (healthPort == port && port != 0) {
            refuse(.healthPort, "must be from 0 to 65535 and differ from the main port, found \(healthPort)")
        }
        if let retainedVersions, retainedVersions < 1 {
            refuse(
                .retainedVersions,
                "must be at least 1 (0 would delete every version as it is published), found \(retainedVersions)"
            )
        }
        if !(31...36_500).contains(eventRetentionDays) {
            refuse(
                .eventRetentionDays,
                "must be from 31 to 36500 days (apps send events up to 30 days old), found \(eventRetentionDays)"
            )
        }
        if !(0...1_000_000_000_000).contains(eventQuotaPerDay) {
            refuse(
                .eventQuotaPerDay,
                "must be 0 (no quota) or from 1 to 1000000000000 events a day, found \(eventQuotaPerDay)"
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
        if !(0.01...600).contains(sqliteBusyTimeoutSeconds) {
            refuse(
                .sqliteBusyTimeoutSeconds,
                "must be from 0.01 to 600 seconds, found \(sqliteBusyTimeoutSeconds)"
            )
        }
        if !(0.1...3600).contains(webhookRetrySeconds) {
            refuse(.webhookRetrySeconds, "must be from 0.1 to 3600 seconds, found \(webhookRetrySeconds)")
        }
        if !(1...3600).contains(webhookLeaseSeconds) {
            refuse(.webhookLeaseSeconds, "must be from 1 to 3600 seconds, found \(webhookLeaseSeconds)")
        }
        if !(10...604_800).contains(scheduleGraceSeconds) {
            refuse(.scheduleGraceSeconds, "must be from 10 to 604800 seconds (a week), found \(scheduleGraceSeconds)")
        }
        if !(1...86_400).contains(idleTimeoutSeconds) {
            refuse(.idleTimeoutSeconds, "must be from 1 to 86400 seconds, found \(idleTimeoutSeconds)")
        }
        if !(16...1_000_000).contains(maximumConnections) {
            refuse(.maximumConnections, "must be from 16 to 1000000, found \(maximumConnections)")
        }
        if !(5...43_200).contains(sessionIdleMinutes) {
            refuse(.sessionIdleMinutes, "must be from 5 to 43200 minutes (30 days), found \(sessionIdleMinutes)")
        }
        if !(1...8_760).contains(sessionLifetimeHours) {
            refuse(.sessionLifetimeHours, "must be from 1 to 8760 hours (a year), found \(sessionLifetimeHours)")
        }
        if !(4...16).contains(passwordHashCost) {
            refuse(.passwordHashCost, "must be from 4 to 16, found \(passwordHashCost)")
        }
        for (field, message) in singleSignOn.problems() {
            let setting: Setting =
                switch field {
                case .issuer: .oidcIssuer
                case .clientId: .oidcClientId
                case .clientSecret: .oidcClientSecret
                case .redirectURL: .oidcRedirectURL
                case .scopes: .oidcScopes
                case .allowedDomains: .oidcAllowedDomains
                case .groupsClaim: .oidcGroupsClaim
                case .groupRoles: .oidcGroupRoles
                }
            refuse(setting, message)
        }
        if passwordSignInDisabled, singleSignOn.issuer == nil {
            refuse(.passwordSignInDisabled, "needs single sign-on (an OIDC issuer), or nobody could sign in")
        }
        if let breakGlassEmail {
            if let problem = Accounts.problem(
                withEmail: breakGlassEmail.trimmingCharacters(in: .whitespaces).lowercased()
            ) {
                refuse(.breakGlassEmail, problem)
            } else if !passwordSignInDisabled {
                refuse(.breakGlassEmail, "only applies with password sign-in turned off")
            }
        }
        if !problems.isEmpty { throw ServerConfigurationError(problems: problems) }
    }

    /// Why a secret is too weak to guard a server, or nil: too short, or a few characters repeated
    /// (`aaaa…`, `abab…`).
    static func weakness(ofSecret secret: String, minimumLength: Int) -> String? {
        if secret.count < minimumLength {
            return "must be at least \(minimumLength) characters, found \(secret.count)"
        }
        if Set(secret).count < 8 {
            return "must not repeat a few characters (found only \(Set(secret).count) different)"
        }
        return nil
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
