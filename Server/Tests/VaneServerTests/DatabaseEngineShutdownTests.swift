import Logging
import SQLKit
import Testing

@testable import VaneServerCore

/// SQLite's sessions run on the connection's own thread (`ThreadPoolExecutor`). Closing the
/// database stops that thread while sessions are still running or waiting for the lock; each of
/// them has to end, with its result or an error, rather than wait forever on a stopped thread.
@Suite struct DatabaseEngineShutdownTests {
    @Test
    func sessionsInFlightWhenTheDatabaseClosesEachEnd() async throws {
        let engine = try await DatabaseEngine.open(
            try await TestDatabase.sqlite.freshLocation(),
            logger: Logger(label: "shutdown")
        )
        try await engine.withSession { database in
            try await database.raw("CREATE TABLE counter (n INTEGER NOT NULL)").run()
            try await database.raw("INSERT INTO counter (n) VALUES (0)").run()
        }
        let started = AsyncStream.makeStream(of: Void.self)
        let ended = AsyncStream.makeStream(of: Bool.self)
        let sessions = 40
        for _ in 0..<sessions {
            Task {
                do {
                    try await engine.transaction { database in
                        started.continuation.yield()
                        try await database.raw("UPDATE counter SET n = n + 1").run()
                        // A suspension inside the session, which resumes on the connection's
                        // thread, or elsewhere once that has stopped.
                        try await Task.sleep(for: .milliseconds(2))
                        try await database.raw("UPDATE counter SET n = n + 1").run()
                    }
                    ended.continuation.yield(true)
                } catch {
                    ended.continuation.yield(false)
                }
            }
        }
        // Close once a few sessions have run, with most of them still queued on the lock.
        var seen = 0
        for await _ in started.stream {
            seen += 1
            if seen == 3 { break }
        }
        try await engine.shutdown()
        // A session left waiting would wait forever: give up on them after 30 s.
        let outcomes = await withTaskGroup(of: [Bool]?.self) { group in
            group.addTask {
                var outcomes: [Bool] = []
                for await outcome in ended.stream {
                    outcomes.append(outcome)
                    if outcomes.count == sessions { break }
                }
                return outcomes
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let ends = try #require(outcomes, "sessions were still waiting 30 s after the database closed")
        #expect(ends.count == sessions)
        #expect(ends.contains(true), "no session finished before the close")
        #expect(ends.contains(false), "every session finished before the close: nothing was in flight")
    }
}
