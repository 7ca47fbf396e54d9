import Logging
import ServiceLifecycle

/// Deletes raw experiment events received longer ago than the retention period, at start and
/// then hourly.
/// The experiments' sums are kept apart, so results do not change.
struct EventRetention: Service {
    let events: ExperimentEventStore
    let retentionDays: Int
    let logger: Logger

    static let intervalNanoseconds: UInt64 = 3_600 * 1_000_000_000

    func run() async throws {
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
    func deleteExpired(now: Int64) async throws {
        try await events.deleteEvents(receivedBefore: now - Int64(retentionDays) * 86_400_000)
    }
}
