import Foundation
import Hummingbird
public import Logging
import NIOConcurrencyHelpers
public import Prometheus
import ServiceLifecycle
import VaneConsole
import VaneCore
import VaneOIDC
import VaneServerCore

/// Vane's server: storage, the serving cache, and the HTTP API, run by swift-service-lifecycle.
///
/// ```swift
/// let server = try await VaneServerApplication.start(configuration: ServerConfiguration(), logger: logger)
/// try await server.run { port in print("serving on \(port)") }   // until SIGTERM or SIGINT
/// ```
///
/// The server records its metrics through swift-metrics, to whatever backend the app bootstrapped
/// (none: they are dropped); it never calls `MetricsSystem.bootstrap` itself. `/metrics` is served
/// only when ``start(configuration:metrics:logger:)`` is given the Prometheus registry to render.
///
/// The composition root: the only place that knows every layer (Support → Storage → Auth →
/// Serving → HTTP and OFREP → Demo).
public final class VaneServerApplication: Sendable {
    /// What a first start created, to show the operator once.
    public struct FirstStartReport: Sendable {
        /// The new admin key, if one was created.
        public var adminKey: String?
        /// The file (mode 0600, in the data directory) that holds ``adminKey``: container
        /// platforms keep standard output in their logs, so the key is printed only on a terminal.
        public var adminKeyFile: String?
        /// The demo project's production client key, if the demo project was created.
        public var demoClientKey: String?
        /// The ids of admin keys an earlier `--admin-key` created that this start revoked because
        /// the configured key changed.
        public var revokedAdminKeyIds: [String] = []
        /// Whether this start generated the server secret (`server-secret` in the data directory).
        public var generatedSecretFile: String?
        /// The one-time password of the console's first account (`admin`), if this start created it.
        public var consoleAdminPassword: String?
        /// The file (mode 0600, in the data directory) that holds ``consoleAdminPassword``.
        public var consoleAdminPasswordFile: String?
    }

    /// The email of the console account the first start creates.
    public static let firstAdminEmail = "admin"

    /// The name of the key `--admin-key` creates.
    static let bootstrapKeyName = "admin (--admin-key)"

    let configuration: ServerConfiguration
    let store: ConfigStore
    /// The templates being served.
    let cache: ServingCache
    /// Publish notifications on this node.
    let events: PublishEvents
    /// What the first start created; empty on later starts.
    public let firstStart: FirstStartReport
    let keys: KeyIndex
    let publisher: TemplatePublisher
    /// Experiments.
    let experiments: ExperimentStore
    /// Starts and stops experiments and serves the running ones to fetch.
    let experimentLifecycle: ExperimentLifecycle
    let streamHub: StreamHub
    let readiness: Readiness
    let logger: Logger
    /// What `/metrics` renders; nil: no `/metrics` route.
    let metrics: PrometheusCollectorRegistry?
    /// The time fetch and event ingestion read: the system's, or a test's.
    let clock: ServerClock
    /// Signs OFREP stream tokens.
    let secret: ServerSecret
    /// The console's people and sessions.
    let accounts: Accounts
    /// The console's templates and static files.
    let consoleAssets: ConsoleAssets
    /// Wakes this node's scheduler when a change request is scheduled here.
    let scheduleWake = WakeSignal()
    /// Creates rollouts and changes their state.
    let rolloutLifecycle: RolloutLifecycle
    /// Wakes this node's rollout guard when events for a rollout's step arrive.
    let rolloutWake = WakeSignal()
    /// Decides running rollouts' steps (a service; tests call its passes directly).
    let rolloutGuard: RolloutGuard
    private let boundPort = NIOLockedValueBox<Int?>(nil)
    private let boundHealthPort = NIOLockedValueBox<Int?>(nil)

    private init(
        configuration: ServerConfiguration,
        store: ConfigStore,
        keys: KeyIndex,
        publisher: TemplatePublisher,
        experiments: ExperimentStore,
        firstStart: FirstStartReport,
        secret: ServerSecret,
        accounts: Accounts,
        consoleAssets: ConsoleAssets,
        metrics: PrometheusCollectorRegistry?,
        clock: ServerClock,
        logger: Logger
    ) {
        self.secret = secret
        self.accounts = accounts
        self.consoleAssets = consoleAssets
        self.configuration = configuration
        self.store = store
        self.cache = publisher.cache
        self.events = publisher.events
        self.publisher = publisher
        self.experiments = experiments
        self.experimentLifecycle = ExperimentLifecycle(store: store, experiments: experiments, cache: publisher.cache)
        self.rolloutLifecycle = RolloutLifecycle(
            publisher: publisher,
            rollouts: RolloutStore(engine: store.engine),
            experiments: experimentLifecycle,
            clock: clock
        )
        self.rolloutGuard = RolloutGuard(lifecycle: rolloutLifecycle, wake: rolloutWake, logger: logger)
        self.streamHub = StreamHub(
            events: events,
            heartbeatSeconds: configuration.streamHeartbeatSeconds,
            caps: StreamHub.Caps(
                perKey: configuration.maximumStreamsPerKey,
                perAddress: configuration.maximumStreamsPerAddress
            )
        ) { [keys] credential, now in
            guard let (key, _) = keys.key(id: credential.keyId), key.revokeTime == nil else { return false }
            return credential.expiry.map { now < $0 } ?? true
        }
        self.keys = keys
        self.firstStart = firstStart
        self.readiness = Readiness()
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
    }

    /// Opens the database, migrates it, creates the first admin key and the demo project on a
    /// first start, and loads every published template into memory.
    /// - Parameter metrics: The registry `GET /metrics` renders, the one the app bootstrapped
    ///   swift-metrics with (`MetricsSystem.bootstrap(PrometheusMetricsFactory(registry:))`);
    ///   nil: no `/metrics` route.
    /// - Throws: ``ServerConfigurationError`` before touching anything when a setting is out of
    ///   range; ``StorageError`` when the database cannot be opened or migrated.
    public static func start(
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry? = nil,
        logger: Logger
    ) async throws -> VaneServerApplication {
        try await start(configuration: configuration, metrics: metrics, clock: .system, logger: logger)
    }

    /// ``start(configuration:metrics:logger:)`` on a given clock (tests move it ahead).
    static func start(
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry?,
        clock: ServerClock,
        logger: Logger
    ) async throws -> VaneServerApplication {
        try configuration.validate()
        // Unreadable TLS files stop the server here, before it touches the database.
        _ = try ServerTLS.configuration(
            certificatePath: configuration.tlsCertificatePath,
            keyPath: configuration.tlsKeyPath
        )
        // Before the database: a data directory the server cannot write stops it here.
        let secret = try ServerSecret.load(configured: configuration.secret, dataDirectory: configuration.dataDirectory)
        if secret.generated, configuration.databaseURL != nil {
            logger.warning(
                "generated a server secret in the data directory; nodes that share this database need the same one (VANE_SECRET or --secret-file), or OFREP stream URLs from one node fail on another"
            )
        }
        let engine = try await DatabaseEngine.open(
            configuration.databaseLocation,
            sqliteBusyTimeoutSeconds: configuration.sqliteBusyTimeoutSeconds,
            logger: logger
        )
        do {
            return try await start(
                configuration: configuration,
                metrics: metrics,
                clock: clock,
                logger: logger,
                secret: secret,
                engine: engine
            )
        } catch {
            // Whatever failed after the database opened, its connections are closed.
            try? await engine.shutdown()
            throw error
        }
    }

    /// The rest of ``start(configuration:metrics:logger:)`` once the database is open.
    private static func start(
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry?,
        clock: ServerClock,
        logger: Logger,
        secret: ServerSecret,
        engine: DatabaseEngine
    ) async throws -> VaneServerApplication {
        let store = try await ConfigStore(engine: engine, retainedVersions: configuration.retainedVersions)
        let keys = KeyIndex(store: store)
        try await keys.refresh()
        let publisher = TemplatePublisher(store: store, cache: ServingCache(), events: PublishEvents(), logger: logger)
        let accounts = Accounts(
            store: AccountStore(engine: engine),
            hasher: PasswordHasher(cost: UInt8(configuration.passwordHashCost)),
            secret: secret,
            idleTimeoutMinutes: configuration.sessionIdleMinutes,
            lifetimeHours: configuration.sessionLifetimeHours,
            passwordSignIn: configuration.passwordSignIn
        )
        var report = try await firstStartSetup(
            store: store,
            keys: keys,
            publisher: publisher,
            configuration: configuration
        )
        if try await accounts.store.users().isEmpty {
            // Like the first admin key: the file first, so the password is never lost.
            let password = Accounts.oneTimePassword()
            let file = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent(
                "console-admin-password"
            )
            try PrivateFiles.write(
                "email: \(firstAdminEmail)\npassword: \(password)\n(one use: the console asks for a new password)\n",
                to: file
            )
            try await accounts.createFirstAdmin(email: firstAdminEmail, password: password)
            report.consoleAdminPassword = password
            report.consoleAdminPasswordFile = file.path
        }
        if secret.generated {
            report.generatedSecretFile =
                URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent(ServerSecret.fileName).path
        }
        for id in report.revokedAdminKeyIds {
            logger.warning(
                "the configured admin key changed: revoked the admin key \(id) that the previous one created"
            )
        }
        let experiments = ExperimentStore(engine: engine)
        try await ExperimentLifecycle(store: store, experiments: experiments, cache: publisher.cache).serveRunning()
        try await publisher.loadAll()
        let application = VaneServerApplication(
            configuration: configuration,
            store: store,
            keys: keys,
            publisher: publisher,
            experiments: experiments,
            firstStart: report,
            secret: secret,
            accounts: accounts,
            consoleAssets: try ConsoleAssets(),
            metrics: metrics,
            clock: clock,
            logger: logger
        )
        application.readiness.set(true)
        return application
    }

    static func firstStartSetup(
        store: ConfigStore,
        keys: KeyIndex,
        publisher: TemplatePublisher,
        configuration: ServerConfiguration
    ) async throws -> FirstStartReport {
        var report = FirstStartReport()
        let existing = try await store.keys()
        if let adminKey = configuration.adminKey {
            if await keys.authenticate(secret: adminKey) == nil {
                try await keys.createKey(
                    name: bootstrapKeyName,
                    role: .admin,
                    projectId: nil,
                    environmentId: nil,
                    actor: .system,
                    secret: adminKey
                )
                // The operator changed the configured key: the one the old value created must not
                // stay valid forever.
                for previous in existing where previous.name == bootstrapKeyName && previous.revokeTime == nil {
                    try await store.revokeKey(id: previous.id, actor: .system)
                    keys.revoke(id: previous.id)
                    report.revokedAdminKeyIds.append(previous.id)
                }
            }
        } else if !existing.contains(where: { $0.role == .admin && $0.revokeTime == nil }) {
            // The file first: a key nobody can read back would lock the operator out.
            let secret = APIKeySecret.generate(role: .admin)
            let file = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("admin-key")
            try PrivateFiles.write(secret + "\n", to: file)
            try await keys.createKey(
                name: "admin",
                role: .admin,
                projectId: nil,
                environmentId: nil,
                actor: .system,
                secret: secret
            )
            report.adminKey = secret
            report.adminKeyFile = file.path
        }
        guard configuration.createsDemoProject, try await store.projects().isEmpty else { return report }
        report.demoClientKey = try await DemoSetup.create(store: store, keys: keys, publisher: publisher)
        return report
    }

    /// The main port's responder: every route and middleware, with fetch matched by its fixed
    /// path before the router (``ServerResponder``).
    func buildResponder() -> ServerResponder {
        let router = Router(context: VaneRequestContext.self)
        // Fetch runs these first three and authentication without the router
        // (``FetchRequestChain``): a middleware added in front of fetch's route goes there too.
        let clientAddresses = ClientAddressResolver(trustedProxies: configuration.trustedProxies)
        router.add(middleware: ClientAddressMiddleware(resolver: clientAddresses))
        let metrics = RequestMetricsMiddleware()
        router.add(middleware: metrics)
        router.add(middleware: ErrorLoggingMiddleware())
        healthRoutes.register(on: router)
        let limiter = RateLimiter(requestsPerSecond: [
            .client: configuration.rateLimit,
            .address: configuration.addressRateLimit,
            .key: configuration.keyRateLimit,
        ])
        let streams = EventStreamResponse(cache: cache, hub: streamHub)
        let ofrepStreams = OFREPStreamRoutes(keys: keys, streams: streams, secret: secret)
        // Before AuthenticationMiddleware: OFREP authenticates itself (its 401/403 have no body).
        OFREPRoutes(keys: keys, cache: cache, limiter: limiter, eventStreams: ofrepStreams).register(on: router)
        ofrepStreams.register(on: router)
        if configuration.consoleEnabled {
            // Before AuthenticationMiddleware: the console authenticates people by session.
            ConsoleRoutes(
                store: store,
                accounts: accounts,
                drafts: DraftStore(engine: store.engine),
                keys: keys,
                streamHub: streamHub,
                publisher: publisher,
                experiments: experiments,
                experimentLifecycle: experimentLifecycle,
                rolloutLifecycle: rolloutLifecycle,
                webhookDestination: webhookDestination,
                renderer: ConsolePageRenderer(assets: consoleAssets),
                secureCookies: configuration.tlsCertificatePath != nil,
                singleSignOn: configuration.singleSignOn.issuer == nil
                    ? nil : SingleSignOn(settings: configuration.singleSignOn, accounts: accounts)
            ).register(on: router)
        }
        let authentication = AuthenticationMiddleware(keys: keys)
        router.add(middleware: authentication)
        AdminRoutes(store: store, keys: keys, streamHub: streamHub).register(on: router)
        UserRoutes(accounts: accounts).register(on: router)
        let environmentPath = RouterPath(EnvironmentAddress.routePattern)
        let environment = router.group(environmentPath)
        TemplateRoutes(store: store, cache: cache, publisher: publisher).register(on: environment)
        FlagRoutes(
            switching: FlagSwitching(store: store, publisher: publisher),
            drafts: DraftStore(engine: store.engine)
        )
        .register(on: environment)
        EvaluationRoutes(publisher: publisher, drafts: DraftStore(engine: store.engine)).register(on: environment)
        ConditionRoutes(publisher: publisher).register(on: environment)
        RebaseRoutes(rebasing: TemplateRebasing(store: store, publisher: publisher)).register(on: environment)
        let fetchRoutes = FetchRoutes(
            cache: cache,
            limiter: limiter,
            servedVersions: ServedVersionLog(engine: store.engine),
            clock: clock
        )
        fetchRoutes.register(on: environment)
        StreamRoutes(streams: streams).register(on: environment)
        let events = ExperimentEventStore(engine: store.engine)
        WebhookRoutes(store: store, webhooks: WebhookStore(engine: store.engine), destination: webhookDestination)
            .register(on: router)
        ExperimentRoutes(store: store, experiments: experiments, lifecycle: experimentLifecycle, events: events)
            .register(on: environment)
        ChangeRequestRoutes(
            applying: changeRequestApplying,
            experiments: experiments,
            drafts: DraftStore(engine: store.engine),
            scheduleWake: scheduleWake,
            clock: clock
        ).register(on: environment)
        EventRoutes(
            store: store,
            cache: cache,
            experiments: experiments,
            ingestor: EventIngestor(store: events),
            events: events,
            limiter: RateLimiter(requestsPerSecond: [
                .address: configuration.eventAddressRateLimit,
                .key: configuration.eventKeyRateLimit,
            ]),
            quota: EventQuota(eventsPerDay: configuration.eventQuotaPerDay),
            clock: clock,
            rolloutWake: rolloutWake
        ).register(on: environment)
        RolloutRoutes(lifecycle: rolloutLifecycle).register(on: environment)
        return ServerResponder(
            router: router.buildResponder(),
            fetch: FetchRequestChain(
                clientAddresses: clientAddresses,
                metrics: metrics,
                authentication: authentication,
                route: fetchRoutes,
                routePath: environmentPath.appendingPath(FetchRoutes.path).description
            )
        )
    }

    /// How change requests apply, for the API and the scheduler.
    var changeRequestApplying: ChangeRequestApplying {
        ChangeRequestApplying(publisher: publisher, lifecycle: experimentLifecycle, clock: clock)
    }

    /// Where webhooks may be sent (the API checks new endpoints with it, the delivery service
    /// every attempt).
    var webhookDestination: WebhookDestination {
        WebhookDestination(allowsPrivateAddresses: configuration.webhooksAllowPrivateAddresses)
    }

    private var healthRoutes: HealthRoutes {
        HealthRoutes(
            readiness: readiness,
            metrics: metrics,
            metricsKeys: configuration.metricsRequireKey ? keys : nil
        )
    }

    /// The router of the health port: `/healthz`, `/readyz` and `/metrics` only.
    func buildHealthRouter() -> Router<VaneRequestContext> {
        let router = Router(context: VaneRequestContext.self)
        router.add(middleware: ErrorLoggingMiddleware())
        healthRoutes.register(on: router)
        return router
    }

    /// Runs the server until SIGTERM or SIGINT, then shuts down gracefully: open event streams
    /// end, requests in flight finish, and the database closes last.
    /// - Parameter onServerRunning: Called once the server listens, with its port (the one
    ///   chosen when ``ServerConfiguration/port`` is 0).
    public func run(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await makeApplication(onServerRunning: onServerRunning).runService()
    }

    /// The Hummingbird application, with the services that run beside it.
    func makeApplication(
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        var services: [any Service] = [
            DatabaseService(engine: store.engine),
            EventRetention(
                events: ExperimentEventStore(engine: store.engine),
                retentionDays: configuration.eventRetentionDays,
                logger: logger
            ),
        ]
        services.append(
            WebhookDeliveryService(
                store: WebhookStore(engine: store.engine),
                settings: WebhookDeliveryService.Settings(
                    destination: webhookDestination,
                    schedule: WebhookRetrySchedule(firstDelaySeconds: configuration.webhookRetrySeconds),
                    leaseSeconds: configuration.webhookLeaseSeconds
                ),
                logger: logger
            )
        )
        services.append(
            ChangeRequestScheduler(
                applying: changeRequestApplying,
                clock: clock,
                wake: scheduleWake,
                settings: ChangeRequestScheduler.Settings(
                    graceMilliseconds: Int64(configuration.scheduleGraceSeconds * 1000)
                ),
                logger: logger
            )
        )
        if configuration.runsRolloutGuard { services.append(rolloutGuard) }
        if store.engine.kind == .postgres, case .postgres(let url) = configuration.databaseLocation {
            services.append(
                VersionPoller(
                    keys: keys,
                    publisher: publisher,
                    experiments: experimentLifecycle,
                    intervalMilliseconds: configuration.pollIntervalMilliseconds,
                    logger: logger
                )
            )
            services.append(VersionListener(url: url, publisher: publisher, logger: logger))
        }
        let tls = try ServerTLS.configuration(
            certificatePath: configuration.tlsCertificatePath,
            keyPath: configuration.tlsKeyPath
        )
        if let healthPort = configuration.healthPort {
            // Its own listener without the connection cap: a health check gets through while the
            // main port holds maximumConnections.
            services.append(
                Application(
                    router: buildHealthRouter(),
                    server: try ServerTLS.server(idleTimeoutSeconds: configuration.idleTimeoutSeconds, tls: tls),
                    configuration: .init(address: .hostname(configuration.host, port: healthPort), serverName: "vane"),
                    onServerRunning: { [boundHealthPort] channel in
                        boundHealthPort.withLockedValue { $0 = channel.localAddress?.port }
                    },
                    logger: logger
                )
            )
        }
        return Application(
            responder: StreamRequestResponder(inner: buildResponder()),
            server: try ServerTLS.server(idleTimeoutSeconds: configuration.idleTimeoutSeconds, tls: tls),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "vane",
                availableConnectionsDelegate: .maximum(configuration.maximumConnections, logger: logger)
            ),
            services: services,
            onServerRunning: { [boundPort] channel in
                let port = channel.localAddress?.port ?? 0
                boundPort.withLockedValue { $0 = port }
                await onServerRunning(port)
            },
            logger: logger
        )
    }

    /// The port the server listens on, once it runs.
    public var port: Int? { boundPort.withLockedValue { $0 } }

    /// The health port (``ServerConfiguration/healthPort``), once it listens.
    public var healthPort: Int? { boundHealthPort.withLockedValue { $0 } }
}
