import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// Several `vane serve` nodes on one PostgreSQL database.
@Suite(.timeLimit(.minutes(5)), .needsPostgreSQL) struct MultiNodeTests {
    /// Polls `check` until it holds, for at most about five seconds.
    func eventually(_ check: @Sendable () async throws -> Bool) async throws -> Bool {
        for _ in 0..<50 {
            if try await check() { return true }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        return false
    }

    /// Two nodes on one PostgreSQL database, each polling for the other's changes every 200 ms.
    func withTwoNodes(_ body: @escaping @Sendable (TestServer, TestServer) async throws -> Void) async throws {
        var configuration = try await TestDatabase.postgres.configuration()
        configuration.pollIntervalMilliseconds = 200
        let shared = configuration
        try await TestServer.run(configuration: shared) { first in
            try await TestServer.run(configuration: shared) { second in try await body(first, second) }
        }
    }

    @Test func aPublishOnOneNodeIsServedByTheOthers() async throws {
        try await withTwoNodes { first, second in
            let key = try await first.createKey(role: "client")
            let fetch: @Sendable (TestServer) async throws -> TestServer.Reply = { node in
                try await node.send(
                    .post,
                    TestServer.demoPath + "/fetch",
                    key: key,
                    json: ["context": ["device.country": "us"]]
                )
            }
            // A key created on the first node works on the second at once.
            #expect(try await fetch(second).object?["templateVersion"] == "1")

            let published = try await first.publish([
                "parameters": ["banner_text": ["defaultValue": ["value": "from node one"]]]
            ])
            #expect(published.status == .ok)
            let served = try await eventually {
                try await fetch(second).object?["entries"]?.objectValue?["banner_text"] == "from node one"
            }
            #expect(served, "the second node never served version 2")

            // A key revoked on the first node stops working on the second.
            let keys = try await first.send(.get, "/v1/keys").object?["keys"]?.arrayValue ?? []
            let id = try #require(
                keys.first { $0.objectValue?["role"] == "client" }?.objectValue?["id"]?.stringValue
            )
            #expect(try await first.send(.delete, "/v1/keys/\(id)").status == .noContent)
            let revoked = try await eventually { try await fetch(second).status == .unauthorized }
            #expect(revoked, "the second node still accepts a revoked key")
        }
    }

    @Test func anExperimentStartedOnOneNodeReachesTheOthersFetches() async throws {
        try await withTwoNodes { first, second in
            let key = try await first.createKey(role: "client")
            let assignment: @Sendable () async throws -> JSONValue? = {
                try await FetchExperimentTests.fetch(second, key: key, unit: "user-1").metadata?["experiment"]
            }
            #expect(try await assignment() == nil)
            try await EventIngestionTests.startExperiment(first)
            let announced = try await eventually { try await assignment() != nil }
            #expect(announced, "the second node never named the variant")
            let stopped = try await first.send(.post, ExperimentAPITests.path + "/checkout-button/stop")
            #expect(stopped.status == .ok)
            let ended = try await eventually { try await assignment() == nil }
            #expect(ended, "the second node still names a variant of a stopped experiment")
        }
    }

    /// Waits for the first event of `stream` for `environment` at or above `version`, for at most `seconds`.
    static func firstEvent(
        _ stream: AsyncStream<PublishEvent>,
        atLeast version: Int64,
        within seconds: Double
    ) async -> Int64? {
        await withTaskGroup(of: Int64?.self) { group in
            group.addTask {
                for await event in stream where event.versionNumber >= version { return event.versionNumber }
                return nil
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test func threeNodesHearAPublishThroughListenNotify() async throws {
        var configuration = try await TestDatabase.postgres.configuration()
        // Polling far too slow to matter: only LISTEN/NOTIFY can deliver within the test.
        configuration.pollIntervalMilliseconds = 600_000
        let shared = configuration
        try await TestServer.run(configuration: shared) { first in
            try await TestServer.run(configuration: shared) { second in
                try await TestServer.run(configuration: shared) { third in
                    // Give the listeners a moment to connect and LISTEN.
                    try await Task.sleep(nanoseconds: 500_000_000)
                    let secondEvents = second.application.events.subscribe()
                    let thirdEvents = third.application.events.subscribe()
                    let published = try await first.publish([
                        "parameters": ["banner_text": ["defaultValue": ["value": "from node one"]]]
                    ])
                    #expect(published.status == .ok)
                    async let heardBySecond = Self.firstEvent(secondEvents, atLeast: 2, within: 5)
                    async let heardByThird = Self.firstEvent(thirdEvents, atLeast: 2, within: 5)
                    #expect(await heardBySecond == 2, "node 2's subscribers did not hear version 2")
                    #expect(await heardByThird == 2, "node 3's subscribers did not hear version 2")
                    let fetched = try await third.send(
                        .post,
                        TestServer.demoPath + "/fetch",
                        key: try await first.createKey(role: "client"),
                        json: ["context": [:]]
                    )
                    #expect(fetched.object?["templateVersion"] == "2")
                }
            }
        }
    }

    @Test func aNodeWhoseListenConnectionDropsCatchesUpWhenItReconnects() async throws {
        var configuration = try await TestDatabase.postgres.configuration()
        configuration.pollIntervalMilliseconds = 600_000
        let shared = configuration
        try await TestServer.run(configuration: shared) { first in
            try await TestServer.run(configuration: shared) { second in
                try await Task.sleep(nanoseconds: 500_000_000)
                let events = second.application.events.subscribe()
                // Cut every LISTEN connection, then publish while the listeners are away.
                try await first.application.store.engine.withSession { database in
                    try await database.raw(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
                    ).run()
                }
                let published = try await first.publish([
                    "parameters": ["banner_text": ["defaultValue": ["value": "while away"]]]
                ])
                #expect(published.status == .ok)
                let heard = await Self.firstEvent(events, atLeast: 2, within: 8)
                #expect(heard == 2, "the second node missed the publish made while it was reconnecting")
            }
        }
    }
}
