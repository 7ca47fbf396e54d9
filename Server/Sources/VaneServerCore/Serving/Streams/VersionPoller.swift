package import Logging
import ServiceLifecycle

/// With several nodes on one PostgreSQL database, picks up versions other nodes published, keys
/// they created or revoked, and experiments they started or stopped.
///
/// It reads only the newest version number per environment, so a poll is cheap; it loads a
/// template only when its number moved (``TemplatePublisher/catchUp()``). The running experiments
/// are read whole (a few rows); fetch serves them anew only when they changed.
package struct VersionPoller: Service {
    package let keys: KeyIndex
    package let publisher: TemplatePublisher
    package let experiments: ExperimentLifecycle
    package let intervalMilliseconds: Int64
    package let logger: Logger

    package init(
        keys: KeyIndex,
        publisher: TemplatePublisher,
        experiments: ExperimentLifecycle,
        intervalMilliseconds: Int64,
        logger: Logger
    ) {
        self.keys = keys
        self.publisher = publisher
        self.experiments = experiments
        self.intervalMilliseconds = intervalMilliseconds
        self.logger = logger
    }

    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            // A long interval must not hold up a shutdown: the sleep ends when one begins.
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(nanoseconds: UInt64(intervalMilliseconds) * 1_000_000)
            }
            do {
                try await poll()
            } catch {
                logger.warning("could not check for new versions", metadata: ["error": "\(error)"])
            }
        }
    }

    package func poll() async throws {
        try await keys.refresh()
        try await publisher.catchUp()
        try await experiments.serveRunning()
    }
}
