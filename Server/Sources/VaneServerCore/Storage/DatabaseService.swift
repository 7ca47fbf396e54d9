import ServiceLifecycle

/// Closes the database after the HTTP server has stopped: services stop in reverse order, and
/// this one is first in the list.
package struct DatabaseService: Service {
    package let engine: DatabaseEngine

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    package func run() async throws {
        try? await gracefulShutdown()
        // In a task of its own: when the service group is cancelled rather than shut down
        // gracefully, this task is cancelled too, and closing the connection from it would fail.
        let engine = engine
        try await Task { try await engine.shutdown() }.value
    }
}
