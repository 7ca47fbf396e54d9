import Foundation
import SQLKit
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The experiment state a group of events reads is the one its stored texts say, though the
/// texts this process wrote are not decoded again (``DecodedStateCache``).
@Suite(.timeLimit(.minutes(10))) struct DecodedStateCacheTests {
    static let environment = EnvironmentKey(projectId: "demo", environmentId: "production")

    /// The stored texts of `checkout-button`'s sums and readings.
    static func texts(_ server: TestServer) async throws -> (tally: String, history: String?) {
        try await server.application.store.engine.withSession { database in
            let first = try await database.raw(
                "SELECT tally, always_valid FROM experiment_tallies WHERE experiment_key = 'checkout-button'"
            ).first()
            let row = try #require(first)
            return (
                try row.decode(column: "tally", as: String.self),
                try row.decode(column: "always_valid", as: String?.self)
            )
        }
    }

    static func stored(_ server: TestServer) async throws -> ExperimentTallyStore.Stored {
        try await server.application.store.engine.withSession { database in
            try await ExperimentTallyStore.stored(Self.environment, experiment: "checkout-button", database: database)
        }
    }

    static func setTally(_ text: String, _ server: TestServer) async throws {
        try await server.application.store.engine.withSession { database in
            try await database.raw(
                "UPDATE experiment_tallies SET tally = \(bind: text) WHERE experiment_key = 'checkout-button'"
            ).run()
        }
    }

    /// Units in both variants with revenue, over several batches: sums and always-valid readings
    /// that the next batch reads back.
    static func sendBatches(_ server: TestServer, from first: Int, count: Int) async throws {
        for batch in 0..<count {
            var events: [JSONValue] = []
            for unit in (first + batch * 10)..<(first + batch * 10 + 10) {
                events.append(
                    ExperimentResultsTests.exposure(
                        "x\(unit)",
                        unit: "u\(unit)",
                        variant: unit % 2 == 0 ? "control" : "new-flow"
                    )
                )
                events.append(
                    ExperimentResultsTests.metric(
                        "r\(unit)",
                        unit: "u\(unit)",
                        name: "revenue",
                        value: Double(unit % 7) + 0.1
                    )
                )
            }
            try await ExperimentResultsTests.send(server, events)
        }
    }

    /// Many experiments counting at once keep at most ``DecodedStateCache/capacity`` states, and
    /// a state is found only under the texts it was kept with.
    @Test func aBurstOfExperimentsKeepsAtMostTheCapacity() async {
        let cache = DecodedStateCache()
        let experiments = 3 * DecodedStateCache.capacity
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<experiments {
                group.addTask {
                    var stored = ExperimentTallyStore.Stored()
                    stored.tally.unitsInSeveralVariants = index
                    cache.remember(
                        stored,
                        of: Self.environment,
                        experiment: "e\(index)",
                        tally: "t\(index)",
                        history: nil
                    )
                }
            }
        }
        #expect(cache.count == DecodedStateCache.capacity)
        var found = 0
        for index in 0..<experiments {
            if let stored = cache.stored(Self.environment, experiment: "e\(index)", tally: "t\(index)", history: nil) {
                #expect(stored.tally.unitsInSeveralVariants == index)
                found += 1
            }
            #expect(
                cache.stored(Self.environment, experiment: "e\(index)", tally: "t\(index + 1)", history: nil) == nil
            )
            #expect(cache.stored(Self.environment, experiment: "e\(index)", tally: "t\(index)", history: "") == nil)
        }
        #expect(found == DecodedStateCache.capacity)
    }

    @Test(arguments: TestDatabase.allCases)
    func theStateReadIsWhatTheStoredTextsDecodeTo(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.sendBatches(server, from: 0, count: 4)
            let (tallyText, historyText) = try await Self.texts(server)
            let history = try #require(historyText)
            // The stored texts decoded afresh, past the cache.
            let decoded = try ExperimentTallyStore.decoded(
                tally: tallyText,
                history: history,
                ExperimentTallyStore.Scope(environment: Self.environment, experiment: "checkout-button")
            )
            #expect(!decoded.history.entries.isEmpty, "the batches made looks: \(history)")
            // The state the last group wrote, as this process keeps it.
            let stored = try await Self.stored(server)
            #expect(stored.tally == decoded.tally)
            #expect(stored.history == decoded.history)
            #expect(stored.tally.variants["control"]?.exposedUnits == 20)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aTallyChangedInTheDatabaseIsReadAsChanged(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.sendBatches(server, from: 0, count: 2)
            var tally = try await Self.stored(server).tally
            #expect(tally.unitsInSeveralVariants == 0)
            // As another node, or an operator, would have written it.
            tally.unitsInSeveralVariants = 7
            try await Self.setTally(String(decoding: try JSONEncoder().encode(tally), as: UTF8.self), server)
            #expect(try await Self.stored(server).tally.unitsInSeveralVariants == 7)
            // The next batch counts on from the changed sums.
            try await Self.sendBatches(server, from: 20, count: 1)
            let counted = try await Self.stored(server).tally
            #expect(counted.unitsInSeveralVariants == 7)
            #expect(counted.variants["control"]?.exposedUnits == 15)

            try await Self.setTally("{not the sums", server)
            await #expect(throws: ExperimentTallyStore.UnreadableState.self) { try await Self.stored(server) }
        }
    }
}
