import NIOConcurrencyHelpers
import Synchronization

/// Stores event batches that arrive together in one transaction (group commit).
///
/// Every batch costs a transaction's fixed price — its commit waits for the disk, and it locks
/// each experiment's sums while counting — however few events it holds. So the batches of one
/// environment queue here, and one writer per environment stores whatever has queued, up to
/// ``maximumEventsPerTransaction``, in one ``ExperimentEventStore/insert(_:rows:in:running:receivedAt:)``.
/// A lone batch is written at once; under load, the batches that arrived during one commit share
/// the next, and a writer that finds fewer batches queued than its last group held waits briefly
/// for the rest, and while commits are quick a group holds about half the events clients keep
/// unanswered, so one half's requests are read while the other half is written (``GroupGathering``).
/// Each request still learns how many of its own events were new.
/// When the database refuses a group's transaction, each request of the group is written again on
/// its own, so a request's failure is its own.
package final class EventIngestor: Sendable {
    /// Events one transaction takes at most (a request's 1,000 are never split).
    package static let maximumEventsPerTransaction = 5_000

    private struct Pending: Sendable {
        package var events: [ExperimentEvent]
        /// `events` as the insert binds them, written by the request (not by the group's writer).
        package var rows: ExperimentEventStore.Rows
        package var running: [Experiment]
        package var receivedAt: Int64
        package var continuation: CheckedContinuation<Int, any Error>
    }

    private struct Queue: Sendable {
        package var pending: [Pending] = []
        package var writers = 0
        /// Events received and not yet answered: queued, or in a writer's group.
        package var unanswered = 0
        /// The most `unanswered` reached since the last group started: what the clients keep in
        /// flight, which sets the next group's limit.
        package var peakUnanswered = 0
        /// What the last group held and took, kept while no writer runs: the next writer's cue.
        package var gathering: GroupGathering
        /// A writer waiting for `target` requests to queue.
        package var gatherer: Gatherer?
    }

    private struct Gatherer: Sendable {
        package var target: Int
        /// Tells this wait apart from later ones, for its timer.
        package var id: Int
        package var continuation: CheckedContinuation<Void, Never>
    }

    /// What a writer does next.
    private enum Step: Sendable {
        case stop
        case gather(target: Int, for: Duration)
        case write([Pending])
    }

    private let store: ExperimentEventStore
    /// Per environment; kept once made (one small entry per environment that received events).
    private let queues = NIOLockedValueBox<[EnvironmentKey: Queue]>([:])
    private let gatherIds = Atomic<Int>(0)
    private let groups = Atomic<Int>(0)
    /// The gathering of an environment's first group.
    private let initialGathering: GroupGathering
    /// Writers per environment. SQLite has one connection, so one. PostgreSQL stores one group
    /// while the previous one counts (the tally's row lock orders the counting): each statement
    /// is a round trip, and a lone writer left the database idle while it waited for the answers.
    private let maximumWriters: Int

    /// - Parameter gathering: What a writer knows before an environment's first group (tests
    ///   start from a given one).
    package init(store: ExperimentEventStore, gathering: GroupGathering = GroupGathering()) {
        self.store = store
        self.maximumWriters = store.engine.kind == .postgres ? 2 : 1
        self.initialGathering = gathering
    }

    /// How many groups (transactions, a group's retries not counted) this ingestor has written.
    package var groupsWritten: Int { groups.load(ordering: .relaxed) }

    /// Whether a writer of the environment is waiting for more batches before its group.
    package func isGathering(_ environment: EnvironmentKey) -> Bool {
        queues.withLockedValue { $0[environment]?.gatherer != nil }
    }

    /// Stores `events` (counting them for the `running` experiments) together with whatever else
    /// is queued for the environment.
    /// - Returns: How many of `events` were stored now; the others were stored before, or earlier
    ///   in the same transaction for another request (`events` holds each id once).
    package func ingest(
        _ events: [ExperimentEvent],
        in environment: EnvironmentKey,
        running: [Experiment],
        receivedAt: Int64
    ) async throws -> Int {
        guard !events.isEmpty else { return 0 }
        let rows = ExperimentEventStore.Rows(events)
        return try await withCheckedThrowingContinuation { continuation in
            let (startsWriter, gathered) = queues.withLockedValue { queues in
                var queue = queues[environment] ?? Queue(gathering: initialGathering)
                queue.pending.append(
                    Pending(
                        events: events,
                        rows: rows,
                        running: running,
                        receivedAt: receivedAt,
                        continuation: continuation
                    )
                )
                queue.unanswered += events.count
                queue.peakUnanswered = max(queue.peakUnanswered, queue.unanswered)
                var gathered: CheckedContinuation<Void, Never>?
                if let gatherer = queue.gatherer, queue.pending.count >= gatherer.target {
                    gathered = gatherer.continuation
                    queue.gatherer = nil
                }
                // A writer that gathers takes what arrives meanwhile: a second one (PostgreSQL)
                // started now would split the group it waits for.
                let starts = queue.writers < maximumWriters && queue.gatherer == nil
                if starts { queue.writers += 1 }
                queues[environment] = queue
                return (starts, gathered)
            }
            gathered?.resume()
            if startsWriter {
                // Above the requests' tasks: every request waits for this one writer, so its
                // continuations should not queue behind the parsing of the next batches.
                Task(priority: .high) { await self.write(environment) }
            }
        }
    }

    /// Writes the environment's queue, a group at a time, until it is empty.
    private func write(_ environment: EnvironmentKey) async {
        var gathered = false
        while true {
            let step = queues.withLockedValue { queues -> Step in
                guard var queue = queues[environment] else { return .stop }
                guard !queue.pending.isEmpty else {
                    queue.writers -= 1
                    queues[environment] = queue
                    return .stop
                }
                // Alone: a second writer (PostgreSQL) overlaps its group with the other's instead.
                if !gathered, queue.writers == 1, let wait = queue.gathering.wait(pending: queue.pending.count) {
                    return .gather(target: queue.gathering.lastRequests, for: wait)
                }
                let limit = min(
                    Self.maximumEventsPerTransaction,
                    queue.gathering.limit(inFlight: queue.peakUnanswered) ?? .max
                )
                var count = 0
                var taken = 0
                for pending in queue.pending {
                    if taken > 0 && count + pending.events.count > limit { break }
                    count += pending.events.count
                    taken += 1
                }
                let group = Array(queue.pending.prefix(taken))
                queue.pending.removeFirst(taken)
                queue.peakUnanswered = queue.unanswered
                queues[environment] = queue
                return .write(group)
            }
            switch step {
            case .stop:
                return
            case .gather(let target, let wait):
                await gather(environment, until: target, atMost: wait)
                gathered = true
            case .write(let group):
                // Counted before the group's requests are answered, so they see it counted.
                groups.add(1, ordering: .relaxed)
                let started = ContinuousClock.now
                let commit = await write(group, in: environment)
                let took = ContinuousClock.now - started
                let events = group.reduce(0) { $0 + $1.events.count }
                queues.withLockedValue { queues in
                    queues[environment]?.gathering.record(
                        requests: group.count,
                        events: events,
                        took: took,
                        commit: commit
                    )
                    queues[environment]?.unanswered -= events
                }
                gathered = false
            }
        }
    }

    /// Returns once `target` requests are queued for the environment, or after `wait`.
    private func gather(_ environment: EnvironmentKey, until target: Int, atMost wait: Duration) async {
        let id = gatherIds.wrappingAdd(1, ordering: .relaxed).newValue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = queues.withLockedValue { queues -> Bool in
                guard var queue = queues[environment], queue.pending.count < target else { return true }
                queue.gatherer = Gatherer(target: target, id: id, continuation: continuation)
                queues[environment] = queue
                return false
            }
            if queued {
                continuation.resume()
                return
            }
            Task {
                try? await Task.sleep(for: wait)
                // Unless the batches came first (then `ingest` resumed it and cleared it).
                let waiting = queues.withLockedValue { queues -> CheckedContinuation<Void, Never>? in
                    guard let gatherer = queues[environment]?.gatherer, gatherer.id == id else { return nil }
                    queues[environment]?.gatherer = nil
                    return gatherer.continuation
                }
                waiting?.resume()
            }
        }
    }

    /// Writes a group and answers its requests; returns how long its commit took (zero when the
    /// database refused it).
    @discardableResult
    private func write(_ group: [Pending], in environment: EnvironmentKey) async -> Duration {
        // Every request read the running experiments within the last second; the transaction
        // checks each one's status again, so the union is safe.
        var running: [String: Experiment] = [:]
        for pending in group {
            for experiment in pending.running { running[experiment.key] = experiment }
        }
        do {
            let (stored, commit) = try await store.insert(
                group.flatMap(\.events),
                rows: .joined(group.map(\.rows)),
                in: environment,
                running: Array(running.values),
                receivedAt: group.map(\.receivedAt).max() ?? 0
            )
            switch stored {
            case .all:
                for pending in group { pending.continuation.resume(returning: pending.events.count) }
            case .only(let ids):
                // An id sent by two requests of the group is new for the first only.
                var claimed: Set<String> = []
                for pending in group {
                    let mine = pending.events.count(where: { ids.contains($0.id) && claimed.insert($0.id).inserted })
                    pending.continuation.resume(returning: mine)
                }
            }
            return commit
        } catch {
            guard group.count > 1 else {
                for pending in group { pending.continuation.resume(throwing: error) }
                return .zero
            }
            // The database refused the transaction, and with it every request that shared it.
            // Whatever one request sent must not sink the others: each is written on its own,
            // so only the one that fails again learns of the failure.
            for pending in group { await write([pending], in: environment) }
            return .zero
        }
    }
}
