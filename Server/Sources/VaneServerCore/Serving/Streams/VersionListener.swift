package import Logging
import NIOPosix
import PostgresKit
import ServiceLifecycle

/// With several nodes on one PostgreSQL database, hears every publish the moment it commits:
/// each publish sends `NOTIFY vane_versions` inside its transaction, and this service, holding a
/// connection of its own with `LISTEN vane_versions`, loads the new version and tells the node's
/// stream subscribers (``TemplatePublisher/catchUp()``: version numbers, then only what moved).
///
/// When its connection drops it reconnects (1, 2, 4 … up to 30 s apart) and first re-reads the
/// newest versions, so a publish made while it was away is not missed. ``VersionPoller`` keeps
/// running as a safety net and picks up keys created or revoked on other nodes: a notification
/// never reloads the keys.
package struct VersionListener: Service {
    package let url: String
    package let publisher: TemplatePublisher
    package let logger: Logger

    package init(url: String, publisher: TemplatePublisher, logger: Logger) {
        self.url = url
        self.publisher = publisher
        self.logger = logger
    }

    package func run() async throws {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        } catch {
            logger.error("cannot read the database URL for LISTEN; other nodes' publishes arrive by polling only")
            return
        }
        var delay = 1.0
        var connectionId = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            connectionId += 1
            do {
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.next(),
                    configuration: configuration,
                    id: connectionId,
                    logger: logger
                )
                delay = 1
                let publisher = self.publisher
                let logger = self.logger
                // Closing the connection is what ends `listen`: on shutdown and on cancellation.
                let close: @Sendable () -> Void = { _ = connection.close() as EventLoopFuture<Void> }
                do {
                    try await withTaskCancellationHandler {
                        try await withGracefulShutdownHandler {
                            try await connection.listen(on: VersionChannel.name) { notifications in
                                // Whatever was published while this node was not listening.
                                try await publisher.catchUp()
                                for try await notification in notifications {
                                    logger.debug("version published", metadata: ["payload": "\(notification.payload)"])
                                    try await publisher.catchUp()
                                }
                            }
                        } onGracefulShutdown: {
                            close()
                        }
                    } onCancel: {
                        close()
                    }
                } catch {
                    // postgres-nio requires every connection to be closed before it is released.
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                logger.warning(
                    "lost the LISTEN connection; reconnecting",
                    metadata: ["error": "\(String(reflecting: error))", "retryInSeconds": "\(delay)"]
                )
            }
            try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            delay = min(delay * 2, 30)
        }
    }
}
