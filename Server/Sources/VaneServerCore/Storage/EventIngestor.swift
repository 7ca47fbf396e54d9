import NIOConcurrencyHelpers

/// Stores event batches that arrive together in one transaction (group commit).
///
/// Every batch costs a transaction's fixed price — its commit waits for the disk, and it locks
/// each experiment's sums while counting — however few events it holds. So the batches of one
/// environment queue here, and one writer per environment stores whatever has queued, up to
/// ``maximumEventsPerTransaction``, in one ``ExperimentEventStore/insert(_:in:running:receivedAt:)``.
/// A lone batch is written at once; under load, the batches that arrived during one commit share
/// the next. Each request still learns which of its own events were new. When the database
/// refuses a group's transaction, each request of the group is written again on its own, so a
/// request's failure is its own.
package final class EventIngestor: Sendable {
    /// Events one transaction takes at most (a request's 1,000 are never split).
    package static let maximumEventsPerTransaction = 5_000

    private struct Pending: Sendable {
        package var events: [ExperimentEvent]
        package var running: [Experiment]
        package var receivedAt: Int64
        package var continuation: CheckedContinuation<Set<String>, any Error>
    }

    private struct Queue: Sendable {
        package var pending: [Pending] = []
        package var writers = 0
    }

    private let store: ExperimentEventStore
    private let queues = NIOLockedValueBox<[EnvironmentKey: Queue]>([:])
    /// Writers per environment. SQLite has one connection, so one. PostgreSQL stores one group
    /// while the previous one counts (the tally's row lock orders the counting): each statement
    /// is a round trip, and a lone writer left the database idle while it waited for the answers.
    private let maximumWriters: Int

    package init(store: ExperimentEventStore) {
        self.store = store
        self.maximumWriters = store.engine.kind == .postgres ? 2 : 1
    }

    /// Stores `events` (counting them for the `running` experiments) together with whatever else
    /// is queued for the environment.
    /// - Returns: The ids of `events` stored now; the others were stored before, or earlier in
    ///   the same transaction for another request.
    package func ingest(
        _ events: [ExperimentEvent],
        in environment: EnvironmentKey,
        running: [Experiment],
        receivedAt: Int64
    ) async throws -> Set<String> {
        guard !events.isEmpty else { return [] }
        return try await withCheckedThrowingContinuation { continuation in
            let startsWriter = queues.withLockedValue { queues in
                var queue = queues[environment] ?? Queue()
                queue.pending.append(
                    Pending(events: events, running: running, receivedAt: receivedAt, continuation: continuation)
                )
                let starts = queue.writers < maximumWriters
                if starts { queue.writers += 1 }
                queues[environment] = queue
                return starts
            }
            if startsWriter {
                Task { await self.write(environment) }
            }
        }
    }

    /// Writes the environment's queue, a group at a time, until it is empty.
    private func write(_ environment: EnvironmentKey) async {
        while true {
            let group = queues.withLockedValue { queues -> [Pending] in
                guard var queue = queues[environment], !queue.pending.isEmpty else {
                    if var queue = queues[environment] {
                        queue.writers -= 1
                        queues[environment] = queue.writers == 0 ? nil : queue
                    }
                    return []
                }
                var count = 0
                var taken = 0
                for pending in queue.pending {
                    if taken > 0 && count + pending.events.count > Self.maximumEventsPerTransaction { break }
                    count += pending.events.count
                    taken += 1
                }
                let group = Array(queue.pending.prefix(taken))
                queue.pending.removeFirst(taken)
                queues[environment] = queue
                return group
            }
            guard !group.isEmpty else { return }
            await write(group, in: environment)
        }
    }

    private func write(_ group: [Pending], in environment: EnvironmentKey) async {
        // Every request read the running experiments within the last second; the transaction
        // checks each one's status again, so the union is safe.
        var running: [String: Experiment] = [:]
        for pending in group {
            for experiment in pending.running { running[experiment.key] = experiment }
        }
        do {
            let stored = try await store.insert(
                group.flatMap(\.events),
                in: environment,
                running: Array(running.values),
                receivedAt: group.map(\.receivedAt).max() ?? 0
            )
            // An id sent by two requests of the group is new for the first only.
            var claimed: Set<String> = []
            for pending in group {
                var mine: Set<String> = []
                for event in pending.events where stored.contains(event.id) && claimed.insert(event.id).inserted {
                    mine.insert(event.id)
                }
                pending.continuation.resume(returning: mine)
            }
        } catch {
            guard group.count > 1 else {
                for pending in group { pending.continuation.resume(throwing: error) }
                return
            }
            // The database refused the transaction, and with it every request that shared it.
            // Whatever one request sent must not sink the others: each is written on its own,
            // so only the one that fails again learns of the failure.
            for pending in group { await write([pending], in: environment) }
        }
    }
}
