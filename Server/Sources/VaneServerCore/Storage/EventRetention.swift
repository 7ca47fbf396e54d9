package import Logging
import ServiceLifecycle

/// Deletes raw experiment events received longer ago than the retention period, at start and
/// then hourly.
/// The experiments' sums are kept apart, so results do not change.
package struct EventRetention: Service {
    package let events: ExperimentEventStore
    package let retentionDays: Int
    package let logger: Logger

    package init(events: ExperimentEventStore, retentionDays: Int, logger: Logger) {
        self.events = events
        self.retentionDays = retentionDays
        self.logger = logger
    }

    package static let intervalNanoseconds: UInt64 = 3_600 * 1_000_000_000

    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do {
                try await deleteExpired(now: Clock.nowMilliseconds())
            } catch {
                logger.warning("could not delete expired experiment events", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(nanoseconds: Self.intervalNanoseconds)
            }
        }
    }

    /// Deletes the events received more than `retentionDays` before `now`.
    package func deleteExpired(now: Int64) async throws {
        try await events.deleteEvents(receivedBefore: now - Int64(retentionDays) * 86_400_000)
    }
}
