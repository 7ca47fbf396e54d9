import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// A group-commit writer that finds fewer batches queued than its last group held waits briefly
/// for the rest, so they share one commit; a group holds about half the events in flight
/// (``GroupGathering``, ``EventIngestor``).
@Suite(.timeLimit(.minutes(5))) struct GroupGatheringTests {
    @Test func aWriterWaitsOnlyForWhatItsLastGroupHeldAndNotLongerThanHalfItsTransaction() {
        var gathering = GroupGathering()
        #expect(gathering.wait(pending: 1) == nil, "nothing written yet: the first group starts at once")
        gathering.record(requests: 1, events: 100, took: .milliseconds(8), commit: .zero)
        #expect(gathering.wait(pending: 1) == nil, "a lone client never waits")
        gathering.record(requests: 7, events: 700, took: .milliseconds(8), commit: .zero)
        #expect(gathering.wait(pending: 1) == .milliseconds(4))
        #expect(gathering.wait(pending: 7) == nil)
        #expect(gathering.wait(pending: 9) == nil)
        gathering.record(requests: 7, events: 700, took: .seconds(2), commit: .zero)
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
            #expect(stored == [2, 2, 2], "each batch's exposure and checkout, new")
            #expect(ingesting.ingestor.groupsWritten == 1, "the three batches shared one transaction")
        }
    }

    @Test func aGroupHoldsHalfTheEventsInFlightWhileACommitCostsLessThanTheOverlapSaves() {
        var gathering = GroupGathering()
        #expect(gathering.limit(inFlight: 800) == nil, "nothing measured yet: no limit")
        // 800 events in 8 ms, 0.5 ms of it the commit: a half's work (3.75 ms) is worth a second
        // commit.
        gathering.record(requests: 8, events: 800, took: .milliseconds(8), commit: .microseconds(500))
        #expect(gathering.limit(inFlight: 800) == 400, "eight SDK batches of 100: two groups of four")
        #expect(gathering.limit(inFlight: 801) == 401)
        #expect(gathering.limit(inFlight: 2 * GroupGathering.minimumSplit - 2) == nil, "a few batches stay one group")
        // The same work, but a commit of 1 ms or 4 ms (a disk slow to sync): one group is faster.
        gathering.record(requests: 8, events: 800, took: .milliseconds(8.5), commit: .milliseconds(1))
        #expect(gathering.limit(inFlight: 800) == nil)
        gathering.record(requests: 8, events: 800, took: .milliseconds(11.5), commit: .milliseconds(4))
        #expect(gathering.limit(inFlight: 800) == nil)
        // Measured on a half: the work per event is what counts, not the group's size.
        gathering.record(requests: 4, events: 400, took: .milliseconds(4.25), commit: .microseconds(500))
        #expect(gathering.limit(inFlight: 800) == 400)
    }

    /// Four batches of 150 events in flight and a quick commit: the first group holds 300 of them,
    /// so two batches' requests are read while the other two are written.
    @Test(arguments: TestDatabase.allCases)
    func batchesInFlightAreWrittenInTwoHalves(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ingesting = try await Ingesting(
                server,
                // As after a group of four with a quick commit: the first batch waits for three
                // more (up to a minute).
                GroupGathering(
                    lastRequests: 4,
                    lastEvents: 600,
                    lastTook: .seconds(600),
                    lastCommit: .zero,
                    maximumWait: .seconds(60)
                )
            )
            let first = Task { try await ingesting.send(units: 0..<75) }
            while !ingesting.ingestor.isGathering(ingesting.environment) {
                try await Task.sleep(for: .milliseconds(5))
            }
            let stored = try await withThrowingTaskGroup(of: Int.self) { group in
                for batch in 1..<4 {
                    group.addTask { try await ingesting.send(units: (batch * 75)..<(batch * 75 + 75)) }
                }
                return try await group.reduce(first.value, +)
            }
            #expect(stored == 600, "every event stored once")
            // SQLite's one writer takes two groups of two; PostgreSQL's second writer may start a
            // group of its own before the four are queued, so it writes two or three.
            #expect(ingesting.ingestor.groupsWritten >= 2, "no group took all 600 events")
            if database == .sqlite { #expect(ingesting.ingestor.groupsWritten == 2) }
            let results = try await ExperimentResultsTests.results(server)
            #expect(ExperimentResultsTests.exposed(results) == ["control": 150, "new-flow": 150])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aWriterStopsGatheringWhenNoMoreBatchesCome(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ingesting = try await Ingesting(
                server,
                GroupGathering(lastRequests: 5, lastTook: .seconds(600), maximumWait: .milliseconds(50))
            )
            #expect(try await ingesting.send(0) == 2, "stored alone once the wait ran out")
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

        /// Ingests unit `n`'s exposure and conversion (an hour ago), received now; returns how
        /// many were stored as new.
        func send(_ n: Int) async throws -> Int {
            try await send(units: n..<(n + 1))
        }

        /// Ingests the exposure and conversion of each unit of `units` in one batch.
        func send(units: Range<Int>) async throws -> Int {
            let time = Clock.nowMilliseconds() - 3_600_000
            return try await ingestor.ingest(
                units.flatMap { ExperimentResultsTests.exposureAndCheckout(unit: $0, at: time) },
                in: environment,
                running: running,
                receivedAt: Clock.nowMilliseconds()
            )
        }
    }
}
