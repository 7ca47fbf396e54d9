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
            let (ingestor, environment, running) = try await Self.ingestor(
                server,
                // As after a group of three: the next lone batch waits for two more (up to a minute).
                GroupGathering(lastRequests: 3, lastTook: .seconds(600), maximumWait: .seconds(60))
            )
            let first = Task {
                try await ingestor.ingest(
                    Self.batch(0),
                    in: environment,
                    running: running,
                    receivedAt: Clock.nowMilliseconds()
                )
            }
            // Not a timing assumption: without gathering the writer would store the batch instead.
            while !ingestor.isGathering(environment) { try await Task.sleep(for: .milliseconds(5)) }
            async let second = ingestor.ingest(
                Self.batch(1),
                in: environment,
                running: running,
                receivedAt: Clock.nowMilliseconds()
            )
            async let third = ingestor.ingest(
                Self.batch(2),
                in: environment,
                running: running,
                receivedAt: Clock.nowMilliseconds()
            )
            let stored = try await [first.value, second, third]
            #expect(stored == [Set(["x0", "m0"]), Set(["x1", "m1"]), Set(["x2", "m2"])])
            #expect(ingestor.groupsWritten == 1, "the three batches shared one transaction")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aWriterStopsGatheringWhenNoMoreBatchesCome(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let (ingestor, environment, running) = try await Self.ingestor(
                server,
                GroupGathering(lastRequests: 5, lastTook: .seconds(600), maximumWait: .milliseconds(50))
            )
            let stored = try await ingestor.ingest(
                Self.batch(0),
                in: environment,
                running: running,
                receivedAt: Clock.nowMilliseconds()
            )
            #expect(stored == ["x0", "m0"], "stored alone once the wait ran out")
            #expect(ingestor.groupsWritten == 1)
        }
    }

    static func ingestor(
        _ server: TestServer,
        _ gathering: GroupGathering
    ) async throws -> (EventIngestor, EnvironmentKey, [Experiment]) {
        try await EventIngestionTests.startExperiment(server)
        let engine = server.application.store.engine
        let environment = EnvironmentKey(projectId: "demo", environmentId: "production")
        let running = try await ExperimentStore(engine: engine).runningExperiments(environment)
        let ingestor = EventIngestor(store: ExperimentEventStore(engine: engine), gathering: gathering)
        return (ingestor, environment, running)
    }

    /// An exposure and a conversion of unit `n`, an hour ago.
    static func batch(_ n: Int) -> [ExperimentEvent] {
        ExperimentResultsTests.exposureAndCheckout(unit: n, at: Clock.nowMilliseconds() - 3_600_000)
    }
}
