import NIOConcurrencyHelpers

/// Feeds every open event stream on this node from one place: publishes go straight into the
/// streams of their environment, and one clock sends all heartbeats.
///
/// A stream connection is then one task (its response writer) and one small buffer, which is
/// what lets a node hold ten thousand of them (docs/PERFORMANCE.md). Each buffer keeps only its
/// newest items, so a connection that stops reading never holds up a publish or another
/// connection; since every event names the newest version, a dropped event loses nothing.
final class StreamHub: Sendable {
    /// What a stream writes next.
    enum Item: Sendable {
        case version(Int64)
        case heartbeat
    }

    private struct State {
        var streams: [EnvironmentKey: [Int: AsyncStream<Item>.Continuation]] = [:]
        var count = 0
        var nextId = 0
        var heartbeat: Task<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())
    private let heartbeatSeconds: Double
    private let bufferSize: Int

    /// Creates a hub that hears `events` and sends a heartbeat every `heartbeatSeconds` while
    /// any stream is open.
    init(events: PublishEvents, heartbeatSeconds: Double, bufferSize: Int = 16) {
        self.heartbeatSeconds = heartbeatSeconds
        self.bufferSize = bufferSize
        events.observe { [weak self] event in self?.deliver(event) }
    }

    /// A new stream of `environment`'s items; call ``disconnect(_:from:)`` with its id when done.
    func connect(_ environment: EnvironmentKey) -> (id: Int, items: AsyncStream<Item>) {
        let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = state.withLockedValue { state in
            state.nextId += 1
            state.streams[environment, default: [:]][state.nextId] = continuation
            state.count += 1
            if state.heartbeat == nil { state.heartbeat = Task { await self.beat() } }
            return state.nextId
        }
        return (id, items)
    }

    /// Forgets a stream (its writer ended).
    func disconnect(_ id: Int, from environment: EnvironmentKey) {
        let (continuation, heartbeat) = state.withLockedValue { state in
            let continuation = state.streams[environment]?.removeValue(forKey: id)
            if state.streams[environment]?.isEmpty == true { state.streams[environment] = nil }
            if continuation != nil { state.count -= 1 }
            var heartbeat: Task<Void, Never>?
            if state.count == 0 {
                heartbeat = state.heartbeat
                state.heartbeat = nil
            }
            return (continuation, heartbeat)
        }
        continuation?.finish()
        heartbeat?.cancel()
    }

    /// The number of open streams.
    var openStreams: Int { state.withLockedValue { $0.count } }

    private func deliver(_ event: PublishEvent) {
        state.withLockedValue { state in
            // Yielding only enqueues; it never runs a reader here, so holding the lock is safe.
            guard let streams = state.streams[event.environment] else { return }
            for continuation in streams.values { continuation.yield(.version(event.versionNumber)) }
        }
    }

    private func beat() async {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: UInt64(heartbeatSeconds * 1_000_000_000))
            if Task.isCancelled { return }
            state.withLockedValue { state in
                for streams in state.streams.values {
                    for continuation in streams.values { continuation.yield(.heartbeat) }
                }
            }
        }
    }
}
