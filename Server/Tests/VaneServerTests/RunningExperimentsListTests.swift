import Testing

@testable import VaneServer
@testable import VaneServerCore

/// The list of running experiments `POST …/events` checks every batch against: read at most once
/// a second per node, however many requests find it out of date at once.
@Suite struct RunningExperimentsListTests {
    let environment = EnvironmentKey(projectId: "demo", environmentId: "production")

    /// Before, every request in flight when the list went stale read it on its own: under load,
    /// dozens of reads a second queued on SQLite's one connection ahead of the events' writes.
    @Test(arguments: TestDatabase.allCases)
    func requestsThatFindTheListStaleShareOneRead(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await EventIngestionTests.startExperiment(server)
            // A minute, not a second: the reads below wait for the lock, which on a loaded machine
            // can outlast a second, and the list's age counts from the read's start.
            let experiments = ExperimentStore(
                engine: server.application.store.engine,
                runningListLifetime: .seconds(60)
            )
            let lists = try await Self.whileReadsWait(server) {
                try await withThrowingTaskGroup(of: [String].self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await experiments.runningExperiments(environment).map(\.key) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(lists == Array(repeating: ["checkout-button"], count: 20))
            #expect(experiments.runningListReads == 1, "20 requests, one read")
            _ = try await experiments.runningExperiments(environment)
            #expect(experiments.runningListReads == 1, "read less than its lifetime ago")
        }
    }

    /// A list older than its lifetime is read again: an experiment started or stopped on another
    /// node reaches this one's events within that time.
    @Test func aListOlderThanItsLifetimeIsReadAgain() async throws {
        try await TestServer.run(.sqlite) { server in
            let experiments = ExperimentStore(
                engine: server.application.store.engine,
                runningListLifetime: .milliseconds(1)
            )
            #expect(try await experiments.runningExperiments(environment).isEmpty)
            // Started behind this store's back, as another node would.
            try await EventIngestionTests.startExperiment(server)
            try await Task.sleep(for: .milliseconds(10))
            #expect(try await experiments.runningExperiments(environment).map(\.key) == ["checkout-button"])
            #expect(experiments.runningListReads == 2)
        }
    }

    /// A start or stop on this node forgets the list; a read that began before must not be kept
    /// as the list after it.
    @Test(arguments: TestDatabase.allCases)
    func aReadThatBeganBeforeTheListWasForgottenIsNotKept(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let experiments = ExperimentStore(engine: server.application.store.engine)
            let before = try await Self.whileReadsWait(server) {
                async let read = experiments.runningExperiments(environment)
                // The read has begun (it waits for the database) before the list is forgotten.
                while experiments.runningListReads == 0 { await Task.yield() }
                experiments.forgetRunning(environment)
                return try await read
            }
            #expect(before.isEmpty)
            try await EventIngestionTests.startExperiment(server)
            #expect(try await experiments.runningExperiments(environment).map(\.key) == ["checkout-button"])
            #expect(experiments.runningListReads == 2)
        }
    }

    /// Runs `body` while a transaction keeps every read of `experiments` waiting (SQLite: its one
    /// connection; PostgreSQL: a table lock), then lets them through and returns `body`'s result.
    static func whileReadsWait<R: Sendable>(
        _ server: TestServer,
        _ body: @escaping @Sendable () async throws -> R
    ) async throws -> R {
        let engine = server.application.store.engine
        let (locked, lockedSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await engine.transaction { database in
                if engine.kind == .postgres {
                    try await database.raw("LOCK TABLE experiments IN ACCESS EXCLUSIVE MODE").run()
                }
                lockedSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in locked { break }
        let work = Task { try await body() }
        // Long enough for every request of `body` to find the list stale and wait.
        try await Task.sleep(for: .milliseconds(200))
        releaseSignal.finish()
        try await holder.value
        return try await work.value
    }
}
