import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// A group-commit writer that finds fewer batches queued than its last group held waits briefly
/// for the rest, so they share one commit (``GroupGathering``, ``EventIngestor``).
@Suite(.timeLimit(.minutes(5))) struct GroupGatheringTests {
    @Test func aWriterWaitsOnlyForWhatItsLastGroupHeldAndNotLongerThanHalfItsTransaction() {
        var gathering = GroupGathering()
        #expect(gathering.wait(pending: 1) == nil, "nothing written yet: the first group starts at once")
        gathering.record(requests: 1, took: .milliseconds(8))
        #expect(gathering.wait(pending: 1) == nil, "a lone client never waits")
        gathering.record(requests: 7, took: .milliseconds(8))
        #expect(gathering.wait(pending: 1) == .milliseconds(4))
        #expect(gathering.wait(pending: 7) == nil)
        #expect(gathering.wait(pending: 9) == nil)
        gathering.record(requests: 7, took: .seconds(2))
        #expect(gathering.wait(pending: 2) == gathering.maximumWait, "a slow transaction does not stretch the wait")
    }

    @Test(arguments: TestDatabase.allCases)
    func batchesThatArriveWhileAWriterGathersShareItsTransaction(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ingesting = try await Ingesting(
                server,
                // As after a group of three: the next lone batch waits for two more (up to a minute).
                GroupGathering(lastRequests: 3, lastTook: .seconds(600), maximumWait: .seconds(60))
            )
            let first = Task { try await ingesting.send(0) }
            // Not a timing assumption: without gathering the writer would store the batch instead.
            while !ingesting.ingestor.isGathering(ingesting.environment) {
                try await Task.sleep(for: .milliseconds(5))
            }
            async let second = ingesting.send(1)
            async let third = ingesting.send(2)
            let stored = try await [first.value, second, third]
            #expect(stored == [Set(["x0", "m0"]), Set(["x1", "m1"]), Set(["x2", "m2"])])
            #expect(ingesting.ingestor.groupsWritten == 1, "the three batches shared one transaction")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aWriterStopsGatheringWhenNoMoreBatchesCome(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ingesting = try await Ingesting(
                server,
                GroupGathering(lastRequests: 5, lastTook: .seconds(600), maximumWait: .milliseconds(50))
            )
            #expect(try await ingesting.send(0) == ["x0", "m0"], "stored alone once the wait ran out")
            #expect(ingesting.ingestor.groupsWritten == 1)
        }
    }

    /// An ingestor of its own on the demo environment, with `checkout-button` running.
    struct Ingesting: Sendable {
        let ingestor: EventIngestor
        let environment = EnvironmentKey(projectId: "demo", environmentId: "production")
        let running: [Experiment]

        init(_ server: TestServer, _ gathering: GroupGathering) async throws {
            try await EventIngestionTests.startExperiment(server)
            let engine = server.application.store.engine
            running = try await ExperimentStore(engine: engine).runningExperiments(environment)
            ingestor = EventIngestor(store: ExperimentEventStore(engine: engine), gathering: gathering)
        }

        /// Ingests unit `n`'s exposure and conversion (an hour ago), received now; returns the
        /// ids stored as new.
        func send(_ n: Int) async throws -> Set<String> {
            try await ingestor.ingest(
                ExperimentResultsTests.exposureAndCheckout(unit: n, at: Clock.nowMilliseconds() - 3_600_000),
                in: environment,
                running: running,
                receivedAt: Clock.nowMilliseconds()
            )
        }
    }
}
