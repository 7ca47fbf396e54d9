import Foundation
import Hummingbird
import Logging
import Metrics
import NIOConcurrencyHelpers
import Prometheus
import ServiceLifecycle
import VaneCore

/// Vane's server: storage, the serving cache, and the HTTP API, run by swift-service-lifecycle.
///
/// ```swift
/// let server = try await VaneServerApplication.start(configuration: ServerConfiguration(), logger: logger)
/// try await server.run()   // until SIGTERM or SIGINT
/// ```
public final class VaneServerApplication: Sendable {
    /// What a first start created, to show the operator once.
    public struct FirstStartReport: Sendable {
        /// The new admin key, if one was created.
        public var adminKey: String?
        /// The demo project's production client key, if the demo project was created.
        public var demoClientKey: String?
    }

    /// The configuration.
    public let configuration: ServerConfiguration
    /// The store.
    public let store: ConfigStore
    /// The templates being served.
    public let cache: ServingCache
    /// Publish notifications on this node.
    public let events: PublishEvents
    /// What the first start created; empty on later starts.
    public let firstStart: FirstStartReport
    let keys: KeyIndex
    let streamHub: StreamHub
    let readiness: Readiness
    let logger: Logger
    let registry: PrometheusCollectorRegistry
    private let boundPort = NIOLockedValueBox<Int?>(nil)

    private init(
        configuration: ServerConfiguration,
        store: ConfigStore,
        keys: KeyIndex,
        firstStart: FirstStartReport,
        logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.cache = ServingCache()
        self.events = PublishEvents()
        self.streamHub = StreamHub(events: events, heartbeatSeconds: configuration.streamHeartbeatSeconds)
        self.keys = keys
        self.firstStart = firstStart
        self.readiness = Readiness()
        self.logger = logger
        self.registry = MetricsBootstrap.registry
    }

    /// Opens the database, migrates it, creates the first admin key and the demo project on a
    /// first start, and loads every published template into memory.
    public static func start(configuration: ServerConfiguration, logger: Logger) async throws -> VaneServerApplication {
        MetricsBootstrap.bootstrap()
        let engine = try await DatabaseEngine.open(configuration.databaseLocation, logger: logger)
        let store: ConfigStore
        do {
            store = try await ConfigStore(engine: engine, retainedVersions: configuration.retainedVersions)
        } catch {
            try? await engine.shutdown()
            throw error
        }
        let keys = KeyIndex(store: store)
        try await keys.refresh()
        let report = try await firstStartSetup(store: store, keys: keys, configuration: configuration)
        let application = VaneServerApplication(
            configuration: configuration,
            store: store,
            keys: keys,
            firstStart: report,
            logger: logger
        )
        try await application.cache.load(from: store, logger: logger)
        application.readiness.set(true)
        return application
    }

    static func firstStartSetup(
        store: ConfigStore,
        keys: KeyIndex,
        configuration: ServerConfiguration
    ) async throws -> FirstStartReport {
        var report = FirstStartReport()
        let existing = try await store.keys()
        if let adminKey = configuration.adminKey {
            if await keys.authenticate(secret: adminKey) == nil {
                let (key, secret) = try await store.createKey(
                    name: "admin (--admin-key)",
                    role: .admin,
                    projectId: nil,
                    environmentId: nil,
                    actor: .system,
                    secret: adminKey
                )
                keys.insert(key, secret: secret)
            }
        } else if !existing.contains(where: { $0.role == .admin && $0.revokeTime == nil }) {
            let (key, secret) = try await store.createKey(
                name: "admin",
                role: .admin,
                projectId: nil,
                environmentId: nil,
                actor: .system
            )
            keys.insert(key, secret: secret)
            report.adminKey = secret
        }
        guard configuration.createsDemoProject, try await store.projects().isEmpty else { return report }
        try await store.createProject(id: DemoProject.projectId, name: "Demo", actor: .system)
        for environment in DemoProject.environments {
            try await store.createEnvironment(
                projectId: DemoProject.projectId,
                id: environment,
                name: environment.capitalized,
                actor: .system
            )
            _ = try await store.publish(
                projectId: DemoProject.projectId,
                environmentId: environment,
                template: DemoProject.template,
                expectedVersion: 0,
                actor: .system
            )
        }
        let (key, secret) = try await store.createKey(
            name: "demo production client",
            role: .client,
            projectId: DemoProject.projectId,
            environmentId: "production",
            actor: .system
        )
        keys.insert(key, secret: secret)
        report.demoClientKey = secret
        return report
    }

    /// The router with every route and middleware.
    public func buildRouter() -> Router<VaneRequestContext> {
        let router = Router(context: VaneRequestContext.self)
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: ErrorLoggingMiddleware())
        HealthRoutes(readiness: readiness, registry: registry).register(on: router)
        let limiter = RateLimiter(requestsPerSecond: configuration.rateLimit)
        let streams = StreamRoutes(cache: cache, hub: streamHub)
        let ofrepStreams = OFREPStreamRoutes(keys: keys, streams: streams)
        // Before AuthenticationMiddleware: OFREP authenticates itself (its 401/403 have no body).
        OFREPRoutes(keys: keys, cache: cache, limiter: limiter, eventStreams: ofrepStreams).register(on: router)
        ofrepStreams.register(on: router)
        router.add(middleware: AuthenticationMiddleware(keys: keys))
        AdminRoutes(store: store, keys: keys).register(on: router)
        let environment = router.group("v1/projects/:project/environments/:environment")
        TemplateRoutes(store: store, cache: cache, events: events).register(on: environment)
        FetchRoutes(cache: cache, limiter: limiter).register(on: environment)
        streams.register(on: environment)
        return router
    }

    /// The Hummingbird application, with the services that run beside it.
    public func makeApplication(
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        var services: [any Service] = [DatabaseService(engine: store.engine)]
        if store.engine.kind == .postgres, case .postgres(let url) = configuration.databaseLocation {
            let poller = VersionPoller(
                store: store,
                cache: cache,
                keys: keys,
                events: events,
                intervalMilliseconds: configuration.pollIntervalMilliseconds,
                logger: logger
            )
            services.append(poller)
            services.append(VersionListener(url: url, poller: poller, logger: logger))
        }
        return Application(
            router: buildRouter(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "vane"),
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
}

/// Closes the database after the HTTP server has stopped: services stop in reverse order, and
/// this one is first in the list.
struct DatabaseService: Service {
    let engine: DatabaseEngine

    func run() async throws {
        try? await gracefulShutdown()
        // In a task of its own: when the service group is cancelled rather than shut down
        // gracefully, this task is cancelled too, and closing the connection from it would fail.
        let engine = engine
        try await Task { try await engine.shutdown() }.value
    }
}

/// Sets up swift-metrics with a Prometheus registry, once per process.
enum MetricsBootstrap {
    static let registry = PrometheusCollectorRegistry()
    private static let done = NIOLockedValueBox(false)

    static func bootstrap() {
        let shouldBootstrap = done.withLockedValue { done -> Bool in
            defer { done = true }
            return !done
        }
        if shouldBootstrap { MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry)) }
    }
}

/// Logs unexpected errors (not API errors, which are answers) without any request headers, so no
/// key ever reaches the logs.
struct ErrorLoggingMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            context.logger.error(
                "request failed",
                metadata: ["path": "\(request.uri.path)", "error": "\(String(describing: error))"]
            )
            throw APIError(.internalServerError, "INTERNAL", "the server failed to handle the request; see its log")
        }
    }
}
