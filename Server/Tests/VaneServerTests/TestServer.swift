import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import NIOCore
import Prometheus
import Synchronization
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The engines every storage-dependent test runs against.
enum TestDatabase: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    /// The engines this run covers: both, or SQLite alone in `scripts/test --quick` (see
    /// ``TestEngines``), where a test's PostgreSQL case is not run rather than passed.
    static var allCases: [TestDatabase] { TestEngines.postgreSQLIsOn ? [.sqlite, .postgres] : [.sqlite] }

    var description: String { rawValue }

    /// Serializes the creation of PostgreSQL test databases.
    private static let creatingDatabases = AsyncLock()

    /// A fresh, empty database of this engine.
    ///
    /// PostgreSQL comes from `VANE_TEST_POSTGRES_URL`, which `scripts/with-postgres` sets; without
    /// it the test fails rather than skips, so CI can never pass without PostgreSQL.
    func freshLocation() async throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "vane-test-\(UUID().uuidString)"
            )
            return .sqlite(path: directory.appendingPathComponent("vane.sqlite").path)
        case .postgres:
            guard let base = ProcessInfo.processInfo.environment["VANE_TEST_POSTGRES_URL"] else {
                throw TestSetupError(
                    "VANE_TEST_POSTGRES_URL is not set: run the tests with scripts/test (or scripts/with-postgres swift test)"
                )
            }
            let name = "vane_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            // One at a time: PostgreSQL runs CREATE DATABASE one at a time anyway, and a hundred
            // suites opening connections for it at once, as the run starts, time the connects out.
            try await Self.creatingDatabases.withLock {
                let engine = try await DatabaseEngine.open(.postgres(url: base), logger: Logger(label: "test"))
                do {
                    try await engine.withSession { database in
                        try await database.raw("CREATE DATABASE \(unsafeRaw: name)").run()
                    }
                } catch {
                    // A pool must be shut down on every way out (AsyncKit asserts otherwise).
                    try? await engine.shutdown()
                    throw error
                }
                try await engine.shutdown()
            }
            guard var components = URLComponents(string: base) else {
                throw TestSetupError("bad VANE_TEST_POSTGRES_URL")
            }
            components.path = "/" + name
            return .postgres(url: components.string ?? base)
        }
    }

    /// A server configuration on this engine.
    func configuration() async throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.adminKey = TestServer.adminKey
        // bcrypt's lowest cost: the first start hashes the console admin's password.
        configuration.passwordHashCost = 4
        switch try await freshLocation() {
        case .sqlite(let path):
            configuration.dataDirectory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        case .postgres(let url):
            configuration.databaseURL = url
            // The server secret's file still goes into the data directory: a fresh one, not ./.vane.
            configuration.dataDirectory =
                FileManager.default.temporaryDirectory.appendingPathComponent("vane-test-\(UUID().uuidString)").path
        }
        return configuration
    }
}

/// The test process's metrics, set up the way an app that embeds the server sets up its own:
/// swift-metrics bootstrapped once, by the app, before any server starts.
enum TestMetrics {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()
}

extension Trait where Self == ConditionTrait {
    /// For a test or suite that needs PostgreSQL: skipped, and reported so, when the run covers
    /// SQLite alone.
    static var needsPostgreSQL: Self {
        .enabled(if: TestEngines.postgreSQLIsOn, Comment(rawValue: TestEngines.sqliteOnlyReason))
    }
}

/// The system's time plus however far the test moved it ahead: a test jumps past a launch time,
/// or to a later receipt time, instead of sleeping until then.
final class TestClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    /// Moves the clock ahead.
    func advance(seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }

    /// The current time on this clock.
    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    /// This clock, for the server.
    var serverClock: ServerClock { ServerClock { self.now } }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A real server on loopback, with helpers to call it.
struct TestServer: Sendable {
    static let adminKey = "vane_admin_test-key-for-the-test-suite-000000000"

    let client: LoopbackClient
    let application: VaneServerApplication

    /// Starts a server on `database`, runs `body` against it over real HTTP, and stops it.
    static func run<R: Sendable>(
        _ database: TestDatabase,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        clock: TestClock? = nil,
        _ body: @Sendable (TestServer) async throws -> R
    ) async throws -> R {
        var configuration = try await database.configuration()
        configure(&configuration)
        return try await run(configuration: configuration, clock: clock, body)
    }

    /// Starts a server with a given configuration (several nodes can share one database).
    /// - Parameters:
    ///   - metrics: What `/metrics` renders: the test process's registry, or nil.
    ///   - clock: A clock the test moves ahead; nil: the system's.
    static func run<R: Sendable>(
        configuration: ServerConfiguration,
        metrics: PrometheusCollectorRegistry? = TestMetrics.registry,
        clock: TestClock? = nil,
        _ body: @Sendable (TestServer) async throws -> R
    ) async throws -> R {
        var logger = Logger(label: "vane-test")
        logger.logLevel = .warning
        let server = try await VaneServerApplication.start(
            configuration: configuration,
            metrics: metrics,
            clock: clock?.serverClock ?? .system,
            logger: logger
        )
        return try await server.makeApplication().test(.live) { client in
            try await LoopbackClient.with(client) { try await body(TestServer(client: $0, application: server)) }
        }
    }

    /// The demo project's production environment path.
    static let demoPath = "/v1/projects/demo/environments/production"

    /// A response with its body parsed as JSON when it is JSON.
    struct Reply: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let text: String

        var json: JSONValue? { try? JSONValue.parse(text) }
        var object: JSONObject? { json?.objectValue }
        var etag: String? { headers[.eTag] }
        /// The `error.status` of an error envelope.
        var errorStatus: String? { object?["error"]?.objectValue?["status"]?.stringValue }
        var errorMessage: String? { object?["error"]?.objectValue?["message"]?.stringValue }
    }

    /// Sends a request; `key` goes into `Authorization: Bearer`.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method,
        _ path: String,
        key: String? = TestServer.adminKey,
        json: JSONValue? = nil,
        text: String? = nil,
        headers: HTTPFields = [:]
    ) async throws -> Reply {
        var fields = headers
        if let key { fields[.authorization] = "Bearer \(key)" }
        var body: ByteBuffer?
        if let json { body = ByteBuffer(string: json.serialized()) }
        if let text { body = ByteBuffer(string: text) }
        if body != nil { fields[.contentType] = "application/json" }
        let response = try await client.executeRequest(uri: path, method: method, headers: fields, body: body)
        return Reply(status: response.status, headers: response.headers, text: String(buffer: response.body))
    }

    /// A connection of a test's own waits as long as the suites' time limits allow: HummingbirdTesting's
    /// default read timeout (15 s) timed the server by accident, and with every suite running at
    /// once on 2 cores an answer took longer (FlagSwitchAPITests' burst on PostgreSQL, twice).
    static let ownConnection = TestClient.Configuration(timeout: .seconds(240))

    /// Sends a request on a connection of its own: concurrent requests through ``send(_:_:key:json:text:headers:)``
    /// share the test client's one connection, which answers one after another (the last of a
    /// burst waits for all the others and can time out).
    func sendOnItsOwnConnection(
        _ method: HTTPRequest.Method,
        _ path: String,
        key: String = TestServer.adminKey,
        json: JSONValue,
        headers: HTTPFields = [:]
    ) async throws -> Reply {
        let port = try #require(client.port)
        var fields = headers
        fields[.authorization] = "Bearer \(key)"
        fields[.contentType] = "application/json"
        let body = ByteBuffer(string: json.serialized())
        let requestFields = fields
        return try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: Self.ownConnection) {
            connection in
            let response = try await connection.execute(
                TestClient.Request(path, method: method, authority: "127.0.0.1", headers: requestFields, body: body)
            )
            return Reply(
                status: response.status,
                headers: response.headers,
                text: response.body.map { String(buffer: $0) } ?? ""
            )
        }
    }

    /// Creates a key through the API and returns its secret.
    func createKey(
        role: String,
        project: String? = "demo",
        environment: String? = "production",
        name: String = "test"
    ) async throws -> String {
        var body: JSONObject = ["name": .string(name), "role": .string(role)]
        if let project { body["project"] = .string(project) }
        if let environment { body["environment"] = .string(environment) }
        let reply = try await send(.post, "/v1/keys", json: .object(body))
        guard reply.status == .created, let secret = reply.object?["key"]?.stringValue else {
            throw TestSetupError("could not create a key: \(reply.status) \(reply.text)")
        }
        return secret
    }

    /// A new client key of the demo environment with its event stream open and the stream's first
    /// lines read: the stream, and the key's id for revoking it.
    func openStreamOfNewClientKey() async throws -> (stream: RawSocket, keyId: String) {
        let key = try await createKey(role: "client")
        guard let stored = await application.keys.authenticate(secret: key) else {
            throw TestSetupError("the new key does not authenticate")
        }
        let stream = try openEventStream(TestServer.demoPath + "/stream", key: key)
        let opened = await stream.read(timeout: 10) { $0.contains("retry: ") }
        guard opened.hasPrefix("HTTP/1.1 200") else { throw TestSetupError("the stream did not open: \(opened)") }
        return (stream, stored.id)
    }

    /// Opens an event stream over a raw socket (`GET path`, `Accept: text/event-stream`), with a
    /// bearer key and a `Last-Event-ID` when given, for reading what URLSession would hide.
    func openEventStream(_ path: String, key: String? = nil, lastEventId: String? = nil) throws -> RawSocket {
        let socket = try RawSocket(port: try #require(client.port))
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        if let key { request += "Authorization: Bearer \(key)\r\n" }
        if let lastEventId { request += "Last-Event-ID: \(lastEventId)\r\n" }
        try socket.send(request + "\r\n")
        return socket
    }

    /// Publishes a template, forcing, and returns the reply.
    @discardableResult
    func publish(_ template: JSONValue, path: String = TestServer.demoPath, ifMatch: String = "*") async throws -> Reply
    {
        try await send(.put, path + "/template", json: template, headers: [.ifMatch: ifMatch])
    }
}
