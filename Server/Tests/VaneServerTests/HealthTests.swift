import Testing
import VaneCore

@testable import VaneServer

@Suite(.timeLimit(.minutes(5))) struct HealthTests {
    @Test(arguments: TestDatabase.allCases)
    func healthReadinessAndMetricsNeedNoKey(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let health = try await server.send(.get, "/healthz", key: nil)
            #expect(health.status == .ok)
            #expect(health.json == ["status": "ok"])
            #expect(try await server.send(.get, "/readyz", key: nil).json == ["status": "ready"])
            let metrics = try await server.send(.get, "/metrics", key: nil)
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("http_server_request_duration"))
        }
    }

    /// An app that embeds the server sets up swift-metrics itself, before the server starts (this
    /// test process did, in `TestMetrics`): starting the server must not bootstrap it again, which
    /// traps. Without a registry there is no `/metrics`; with the app's, it renders what the
    /// server recorded through the app's backend.
    @Test func anAppThatBootstrappedItsOwnMetricsStartsTheServerInProcess() async throws {
        _ = TestMetrics.registry
        let configuration = try await TestDatabase.sqlite.configuration()
        try await TestServer.run(configuration: configuration, metrics: nil) { server in
            let health = try await server.send(.get, "/healthz", key: nil)
            #expect(health.status == .ok)
            let metrics = try await server.send(.get, "/metrics")
            #expect(metrics.status == .notFound, "no registry, no /metrics")
        }
        let second = try await TestDatabase.sqlite.configuration()
        try await TestServer.run(configuration: second) { server in
            let metrics = try await server.send(.get, "/metrics", key: nil)
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("http_server_request_duration"), "\(metrics.text.prefix(300))")
        }
    }

    struct Boom: Error {}

    @Test(arguments: TestDatabase.allCases)
    func servicesCancelledMidRequestStillCloseTheDatabase(database: TestDatabase) async throws {
        // A body that throws cancels the application's services instead of shutting them down
        // gracefully; the database is closed all the same (SQLite asserts when it is not).
        await #expect(throws: Boom.self) {
            try await TestServer.run(database) { server in
                #expect(try await server.send(.get, "/readyz", key: nil).status == .ok)
                throw Boom()
            }
        }
    }
}
