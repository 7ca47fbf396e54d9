import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLiteFloor
import VaneCore
import VaneServerCore

/// `POST /events-stored`: the floor under vane's `POST …/events` on SQLite with both halves on the
/// same cores. Hummingbird reads each batch's body, and SQLite stores the batches that arrived
/// together in one transaction of vane's (`SQLiteFloor/sqlite-floor.c`, the floor
/// `ingest-benchmark.sh` also runs alone), on one thread of its own as SQLiteNIO's.
///
/// With `?parse=1` the route also takes the step every ingest must: the body parsed with vane's
/// JSON parser and read as events with vane's rules (`ExperimentEventReader`), as many stored as
/// were read. With `?parse=foundation` Foundation's `JSONDecoder` decodes it into plain `Codable`
/// events instead, checking nothing (the parser vane's is compared with). Without `parse`, a body
/// counts as the benchmark's 100 events.
///
/// Left out, so the floor is the least such a server does: authentication, the running
/// experiments, the quota, counting the events into the experiment's sums in Swift (the
/// transaction still writes sums and units of their size), SQLiteNIO's statements prepared per
/// query, and the errors. The rows stored are made in C with the same shape and count, not the
/// parsed ones.
///
/// Groups: `?group=N` sets how many events a transaction takes, as `sqlite-floor.c` is given
/// them: the benchmark passes half the events its client keeps in flight, what vane's groups hold
/// (`GroupGathering`). A writer waits up to 5 ms for that many to queue, then takes whole
/// batches up to it (at least one batch, at most 5,000 events). Without `group`, it takes what
/// queued.
final class StoredEventsFloor: Sendable {
    private struct Pending: Sendable {
        var events: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct Queue: Sendable {
        var pending: [Pending] = []
        var queuedEvents = 0
        var writing = false
        /// A writer waiting for `target` events to queue; `id` tells its timeout from later ones.
        var gatherer: (target: Int, id: Int, continuation: CheckedContinuation<Void, Never>)?
        var gathers = 0
    }

    /// How long a writer waits for its group's events.
    private static let maximumWait = Duration.milliseconds(5)

    /// A batch as `JSONDecoder` reads it for `?parse=foundation`: the members the benchmark sends.
    private struct DecodedBatch: Decodable {
        struct Event: Decodable {
            var id: String
            var type: String
            var unit: String
            var time: String
            var experiment: String?
            var variant: String?
            var templateVersion: String?
            var name: String?
            var value: Double?
        }

        var events: [Event]
    }

    /// Made once, as vane keeps its decoders: the comparison is of parsing, not of setting up.
    private static let decoder = JSONDecoder()

    private let queue = NIOLockedValueBox(Queue())
    /// SQLite's thread; nil when no data folder was given.
    private let thread: NIOThreadPool?

    /// - Parameter directory: Where the database is made afresh; nil answers 503.
    init(directory: String?) {
        guard let directory else {
            thread = nil
            return
        }
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        self.thread = thread
        // Opened on its thread before the first request.
        thread.submit { _ in sqlite_floor_open(directory) }
    }

    func respond(_ request: Request, context: some RequestContext) async throws -> Response {
        guard let thread else {
            return Response(status: .serviceUnavailable)
        }
        let body = try await request.body.collect(upTo: 1 << 20)
        let target = request.uri.queryParameters.get("group", as: Int.self) ?? 0
        var events = 100
        switch request.uri.queryParameters["parse"] {
        case "1":
            let object = try JSONBody.object(parsing: Array(buffer: body))
            let now = VaneServerCore.Clock.nowMilliseconds()
            guard case .success(let batch) = ExperimentEventReader.read(object, now: now), !batch.events.isEmpty
            else { return Response(status: .badRequest) }
            events = batch.events.count
        case "foundation":
            events = try Self.decoder.decode(DecodedBatch.self, from: Data(buffer: body)).events.count
        default:
            break
        }
        await store(events, target: min(max(target, 0), Int(SQLITE_FLOOR_MAXIMUM_GROUP)), on: thread)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"accepted\":\(events)}"))
        )
    }

    /// Returns once `events` are committed, with whatever else was queued meanwhile; `target` is
    /// the events a group waits for (0: none).
    private func store(_ events: Int, target: Int, on thread: NIOThreadPool) async {
        await withCheckedContinuation { continuation in
            let (starts, gathered) = queue.withLockedValue { queue in
                queue.pending.append(Pending(events: events, continuation: continuation))
                queue.queuedEvents += events
                var gathered: CheckedContinuation<Void, Never>?
                if let gatherer = queue.gatherer, queue.queuedEvents >= gatherer.target {
                    gathered = gatherer.continuation
                    queue.gatherer = nil
                }
                guard !queue.writing else { return (false, gathered) }
                queue.writing = true
                return (true, gathered)
            }
            gathered?.resume()
            if starts { Task { await self.write(target: target, on: thread) } }
        }
    }

    /// Returns once `target` events are queued, or after ``maximumWait``.
    private func gather(_ target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = queue.withLockedValue { queue -> Int? in
                guard queue.queuedEvents < target else { return nil }
                queue.gathers += 1
                queue.gatherer = (target, queue.gathers, continuation)
                return queue.gathers
            }
            guard let id else { return continuation.resume() }
            Task {
                try? await Task.sleep(for: Self.maximumWait)
                let waiting = queue.withLockedValue { queue -> CheckedContinuation<Void, Never>? in
                    guard let gatherer = queue.gatherer, gatherer.id == id else { return nil }
                    queue.gatherer = nil
                    return gatherer.continuation
                }
                waiting?.resume()
            }
        }
    }

    private func write(target: Int, on thread: NIOThreadPool) async {
        while true {
            if target > 0 { await gather(target) }
            let group = queue.withLockedValue { queue -> [Pending] in
                let limit = target > 0 ? target : Int(SQLITE_FLOOR_MAXIMUM_GROUP)
                var count = 0
                var taken = 0
                for pending in queue.pending {
                    if taken > 0 && count + pending.events > limit { break }
                    count += pending.events
                    taken += 1
                }
                let group = Array(queue.pending.prefix(taken))
                queue.pending.removeFirst(taken)
                queue.queuedEvents -= count
                if group.isEmpty { queue.writing = false }
                return group
            }
            guard !group.isEmpty else { return }
            let events = group.reduce(0) { $0 + $1.events }
            // Errors end the process (sqlite-floor.c): a floor that failed must not print a figure.
            try? await thread.runIfActive { sqlite_floor_store(Int32(events)) }
            for pending in group { pending.continuation.resume() }
        }
    }
}
