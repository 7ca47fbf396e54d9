import NIOConcurrencyHelpers

/// Feeds every open event stream on this node from one place: publishes go straight into the
/// streams of their environment, and one clock sends all heartbeats.
///
/// A stream connection is then one task (its response writer) and one small buffer, which is
/// what lets a node hold ten thousand of them (docs/PERFORMANCE.md). Each buffer keeps only its
/// newest items, so a connection that stops reading never holds up a publish or another
/// connection; since every event names the newest version, a dropped event loses nothing.
///
/// Every stream remembers the credential that opened it. Revoking a key on this node ends its
/// streams at once (``closeStreams(ofKey:)``); the heartbeat clock ends streams whose key was
/// revoked elsewhere (the key index learns within the poll interval) or whose token expired.
final class StreamHub: Sendable {
    /// What opened a stream: an API key, and for an OFREP stream URL its token's expiry.
    struct Credential: Sendable, Hashable {
        /// The key's id.
        var keyId: String
        /// Unix seconds after which the stream closes; nil for a stream opened with the key itself.
        var expiry: Int64?
    }

    private struct Stream {
        var continuation: AsyncStream<Item>.Continuation
        var credential: Credential
    }

    /// What a stream writes next.
    enum Item: Sendable {
        case version(Int64)
        case heartbeat
    }

    private struct State {
        var streams: [EnvironmentKey: [Int: Stream]] = [:]
        var count = 0
        var nextId = 0
        var heartbeat: Task<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())
    private let heartbeatSeconds: Double
    private let bufferSize: Int
    /// Whether a credential still opens streams at a time (Unix seconds).
    private let isValid: @Sendable (Credential, Int64) -> Bool

    /// Creates a hub that hears `events` and sends a heartbeat every `heartbeatSeconds` while
    /// any stream is open; at each heartbeat, streams whose credential `isValid` refuses end.
    init(
        events: PublishEvents,
        heartbeatSeconds: Double,
        bufferSize: Int = 16,
        isValid: @escaping @Sendable (Credential, Int64) -> Bool = { _, _ in true }
    ) {
        self.heartbeatSeconds = heartbeatSeconds
        self.bufferSize = bufferSize
        self.isValid = isValid
        events.observe { [weak self] event in self?.deliver(event) }
    }

    /// A new stream of `environment`'s items; call ``disconnect(_:from:)`` with its id when done.
    func connect(_ environment: EnvironmentKey, credential: Credential) -> (id: Int, items: AsyncStream<Item>) {
        let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = state.withLockedValue { state in
            state.nextId += 1
            state.streams[environment, default: [:]][state.nextId] = Stream(
                continuation: continuation,
                credential: credential
            )
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
        continuation?.continuation.finish()
        heartbeat?.cancel()
    }

    /// Ends every stream a key opened: it was just revoked on this node.
    func closeStreams(ofKey keyId: String) {
        close { credential, _ in credential.keyId == keyId }
    }

    /// Ends the streams `shouldClose` picks. Their writers then finish their responses and
    /// disconnect, which forgets them.
    private func close(where shouldClose: (Credential, Int64) -> Bool) {
        let now = Clock.nowMilliseconds() / 1000
        let closing: [AsyncStream<Item>.Continuation] = state.withLockedValue { state in
            state.streams.values.flatMap { streams in
                streams.values.filter { shouldClose($0.credential, now) }.map(\.continuation)
            }
        }
        for continuation in closing { continuation.finish() }
    }

    /// The number of open streams.
    var openStreams: Int { state.withLockedValue { $0.count } }

    private func deliver(_ event: PublishEvent) {
        state.withLockedValue { state in
            // Yielding only enqueues; it never runs a reader here, so holding the lock is safe.
            guard let streams = state.streams[event.environment] else { return }
            for stream in streams.values { stream.continuation.yield(.version(event.versionNumber)) }
        }
    }

    private func beat() async {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: UInt64(heartbeatSeconds * 1_000_000_000))
            if Task.isCancelled { return }
            close { [isValid] credential, now in !isValid(credential, now) }
            state.withLockedValue { state in
                for streams in state.streams.values {
                    for stream in streams.values { stream.continuation.yield(.heartbeat) }
                }
            }
        }
    }
}
