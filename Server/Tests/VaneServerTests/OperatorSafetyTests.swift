import Foundation
import Logging
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// What an operator configures cannot weaken the server (issue #13): admin keys that change,
/// the secret that signs stream URLs, a busy SQLite file, a `/metrics` that needs a key.
@Suite(.timeLimit(.minutes(5))) struct OperatorSafetyTests {
    static let firstKey = "vane_admin_first-configured-key-0123456789abcdef"
    static let secondKey = "vane_admin_second-configured-key-0123456789abcdef"

    @Test func changingTheConfiguredAdminKeyRevokesThePreviousOne() async throws {
        var configuration = try await TestDatabase.sqlite.configuration()
        configuration.adminKey = Self.firstKey
        try await TestServer.run(configuration: configuration) { server in
            let listed = try await server.send(.get, "/v1/projects", key: Self.firstKey)
            #expect(listed.status == .ok)
        }
        configuration.adminKey = Self.secondKey
        try await TestServer.run(configuration: configuration) { server in
            #expect(server.application.firstStart.revokedAdminKeyIds.count == 1)
            #expect(try await server.send(.get, "/v1/projects", key: Self.secondKey).status == .ok)
            #expect(
                try await server.send(.get, "/v1/projects", key: Self.firstKey).status == .unauthorized,
                "the old bootstrap key no longer works"
            )
            let audit = try await server.send(.get, "/v1/audit", key: Self.secondKey)
            #expect(audit.text.contains("key.revoke"), "the revocation is audited: \(audit.text)")
        }
    }

    @Test func weakAdminKeysAndSecretsAreRefused() throws {
        var configuration = ServerConfiguration()
        configuration.adminKey = "a"
        configuration.secret = String(repeating: "ab", count: 20)
        let error = try #require(throws: ServerConfigurationError.self) { try configuration.validate() }
        #expect(error.problems.map(\.setting) == [.adminKey, .secret])
        #expect(error.description.contains("at least 32 characters, found 1"))
        #expect(error.description.contains("must not repeat a few characters"))
    }

    @Test func theServerSecretIsKeptPrivateAndSurvivesRestarts() async throws {
        let configuration = try await TestDatabase.sqlite.configuration()
        let file = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent(ServerSecret.fileName)
        let token = try await TestServer.run(configuration: configuration) { server in
            #expect(server.application.firstStart.generatedSecretFile == file.path)
            let key = try await server.createKey(role: "client")
            return try await ClientLimitsTests.ofrepStreamToken(server, key: key)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let secret = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.count == 64)
        try await TestServer.run(configuration: configuration) { server in
            #expect(server.application.firstStart.generatedSecretFile == nil, "the secret was reused")
            let opened = try StreamToken.verify(
                token,
                keys: server.application.keys,
                secret: server.application.secret,
                now: Int64(Date().timeIntervalSince1970)
            )
            #expect(opened == EnvironmentKey(projectId: "demo", environmentId: "production"))
        }
    }

    @Test(.needsPostgreSQL) func nodesWithTheSameSecretAcceptEachOthersStreamURLs() async throws {
        var configuration = try await TestDatabase.postgres.configuration()
        configuration.secret = "a-secret-that-two-nodes-share-0123456789"
        let token = try await TestServer.run(configuration: configuration) { server in
            let key = try await server.createKey(role: "client")
            return try await ClientLimitsTests.ofrepStreamToken(server, key: key)
        }
        // Another node: its own data directory, the same database and secret.
        configuration.dataDirectory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("vane-test-\(UUID().uuidString)").path
        try await TestServer.run(configuration: configuration) { server in
            let now = Int64(Date().timeIntervalSince1970)
            #expect(throws: Never.self) {
                try StreamToken.verify(
                    token,
                    keys: server.application.keys,
                    secret: server.application.secret,
                    now: now
                )
            }
            #expect(throws: StreamToken.Rejection.badSignature) {
                try StreamToken.verify(
                    token,
                    keys: server.application.keys,
                    secret: ServerSecret("another-secret-that-is-long-enough-0123"),
                    now: now
                )
            }
        }
    }

    @Test func aBusySQLiteFileAnswers503WithRetryAfterAndChangesNothing() async throws {
        var settings = try await TestDatabase.sqlite.configuration()
        // A short wait for the lock (5 s by default), so the publish gives up soon.
        settings.sqliteBusyTimeoutSeconds = 0.2
        let configuration = settings
        try await TestServer.run(configuration: configuration) { server in
            let template: JSONValue = ["parameters": ["a": ["defaultValue": ["value": "1"]]]]
            #expect(try await server.publish(template).status == .ok)
            let before = try await server.send(.get, TestServer.demoPath + "/template")
            // Another process's view of the same file, holding its write lock for longer than the
            // server's busy timeout.
            let other = try await DatabaseEngine.open(configuration.databaseLocation, logger: Logger(label: "other"))
            // The lock is held until the publish has answered (at most 60 s), however slowly a
            // loaded machine gets the request to the database: a fixed hold could end first.
            let locked = AsyncStream.makeStream(of: Void.self)
            let answered = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await other.transaction { _ in
                    locked.continuation.yield()
                    let waiting = Task {
                        for await _ in answered.stream { break }
                    }
                    let limit = Task {
                        try? await Task.sleep(nanoseconds: 60_000_000_000)
                        waiting.cancel()
                    }
                    await waiting.value
                    limit.cancel()
                }
            }
            for await _ in locked.stream { break }
            let busy = try await server.publish(
                ["parameters": ["a": ["defaultValue": ["value": "2"]]]],
                ifMatch: try #require(before.etag)
            )
            answered.continuation.yield()
            #expect(busy.status == .serviceUnavailable, "\(busy.text)")
            #expect(busy.errorStatus == "UNAVAILABLE")
            #expect(busy.errorMessage?.contains("the database is busy") == true)
            #expect(busy.headers[.retryAfter] == "1")
            try await holder.value
            try await other.shutdown()
            let after = try await server.send(.get, TestServer.demoPath + "/template")
            #expect(after.etag == before.etag, "nothing was written")
            let retried = try await server.publish(
                ["parameters": ["a": ["defaultValue": ["value": "2"]]]],
                ifMatch: try #require(before.etag)
            )
            #expect(retried.status == .ok, "the same request succeeds once the lock is free: \(retried.text)")
        }
    }

    @Test func aStoreOpensWhileAnotherProcessHoldsTheWriteLockForLong() async throws {
        let location = try await TestDatabase.sqlite.freshLocation()
        guard case .sqlite(let path) = location else { return }
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        let holder = try await DatabaseEngine.open(location, logger: Logger(label: "holder"))
        let locked = AsyncStream.makeStream(of: Void.self)
        // Longer than the opening store's busy timeout (0.5 s): the first migration attempt
        // gives up, a later one succeeds.
        let holding = Task {
            try await holder.transaction { _ in
                locked.continuation.yield()
                try await Task.sleep(nanoseconds: 1_200_000_000)
            }
        }
        for await _ in locked.stream { break }
        let engine = try await DatabaseEngine.open(
            location,
            sqliteBusyTimeoutSeconds: 0.5,
            logger: Logger(label: "opening")
        )
        let store = try await ConfigStore(engine: engine)
        #expect(try await Migrations.appliedVersions(store.engine) == Set(Migrations.all.map(\.version)))
        try await holding.value
        try await engine.shutdown()
        try await holder.shutdown()
    }

    @Test func metricsCanRequireAKey() async throws {
        let keyed: (inout ServerConfiguration) -> Void = { $0.metricsRequireKey = true }
        try await TestServer.run(.sqlite, configure: keyed) { server in
            #expect(try await server.send(.get, "/metrics", key: nil).status == .unauthorized)
            let client = try await server.createKey(role: "client")
            #expect(try await server.send(.get, "/metrics", key: client).status == .forbidden)
            let serverKey = try await server.createKey(role: "server")
            #expect(try await server.send(.get, "/metrics", key: serverKey).status == .ok)
            #expect(try await server.send(.get, "/metrics").status == .ok)
            #expect(try await server.send(.get, "/healthz", key: nil).status == .ok, "health checks need no key")
        }
        try await TestServer.run(.sqlite) { server in
            let metrics = try await server.send(.get, "/metrics", key: nil)
            #expect(metrics.status == .ok, "off by default")
        }
    }
}
