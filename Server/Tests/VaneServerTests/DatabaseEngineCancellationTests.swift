import Logging
import Synchronization
import Testing

@testable import VaneServerCore

/// `DatabaseEngine.open` in a task that is cancelled half-way: the SQLite connection it has opened
/// is still closed on the way out. A cancelled task's close used to be dropped by SQLiteNIO's
/// thread pool, and the open connection then stopped the process with SQLiteNIO's deinit assertion.
@Suite struct DatabaseEngineCancellationTests {
    /// Cancels a task at the first line its logger writes: SQLiteNIO's debug line after it has
    /// opened the file, so the connection exists and every later step of `open` runs cancelled.
    final class CancelAtFirstLogLine: Sendable {
        private let state = Mutex<(task: Task<DatabaseEngine, any Error>?, lines: [String])>((nil, []))

        func watch(_ task: Task<DatabaseEngine, any Error>) {
            state.withLock { $0.task = task }
        }

        func logged(_ line: String) {
            let task = state.withLock { watched in
                watched.lines.append(line)
                return watched.lines.count == 1 ? watched.task : nil
            }
            task?.cancel()
        }

        var lines: [String] { state.withLock { $0.lines } }
    }

    struct Handler: LogHandler {
        let canceller: CancelAtFirstLogLine
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            canceller.logged(event.message.description)
        }
    }

    @Test func anOpenCancelledAfterTheFileOpenedFailsAndClosesTheConnection() async throws {
        let location = try await TestDatabase.sqlite.freshLocation()
        let canceller = CancelAtFirstLogLine()
        let logger = Logger(label: "cancelled-open") { _ in Handler(canceller: canceller) }
        // The task waits until the canceller knows it, so the cancel cannot come before.
        let start = AsyncStream.makeStream(of: Void.self)
        let opening = Task {
            for await _ in start.stream { break }
            return try await DatabaseEngine.open(location, logger: logger)
        }
        canceller.watch(opening)
        start.continuation.yield()

        switch await opening.result {
        case .success(let engine):
            try await engine.shutdown()
            Issue.record("the open succeeded; the test meant to cancel it after SQLite opened the file")
        case .failure(let error):
            #expect(error is StorageError, "\(error)")
        }
        #expect(!canceller.lines.isEmpty, "SQLiteNIO wrote no debug line while opening: nothing was cancelled")
        // Nothing holds the file: it opens again and closes.
        let again = try await DatabaseEngine.open(location, logger: Logger(label: "after"))
        try await again.shutdown()
    }
}
