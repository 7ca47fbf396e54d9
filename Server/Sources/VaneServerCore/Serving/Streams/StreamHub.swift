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
package final class StreamHub: Sendable {
    /// What opened a stream: an API key, and for an OFREP stream URL its token's expiry.
    package struct Credential: Sendable, Hashable {
        /// The key's id.
        package var keyId: String
        /// Unix seconds after which the stream closes; nil for a stream opened with the key itself.
        package var expiry: Int64?

        package init(keyId: String, expiry: Int64? = nil) {
            self.keyId = keyId
            self.expiry = expiry
        }
    }

    private struct Stream {
        package var continuation: AsyncStream<Item>.Continuation
        package var credential: Credential
        package var address: String
    }

    /// Why a new stream is refused: its key or its address holds as many streams as allowed.
    package struct Refusal: Sendable, Equatable {
        /// What reached its cap.
        package enum Scope: Sendable, Equatable {
            case key, address
        }

        package var scope: Scope
        package var limit: Int

        /// The `Retry-After` of a refusal: streams come and go, so a short wait.
        package static let retryAfterSeconds = 30

        /// What the client is told.
        package var message: String {
            switch scope {
            case .key:
                return "this key already has \(limit) event streams open on this server; close one or retry later"
            case .address:
                return "this address already has \(limit) event streams open; close one or retry later"
            }
        }
    }

    /// The caps on open streams: per key and per client address.
    package struct Caps: Sendable {
        package var perKey: Int
        package var perAddress: Int

        package init(perKey: Int, perAddress: Int) {
            self.perKey = perKey
            self.perAddress = perAddress
        }

        /// No practical cap (tests that do not exercise caps).
        package static let unlimited = Caps(perKey: .max, perAddress: .max)
    }

    /// What a stream writes next.
    package enum Item: Sendable {
        case version(Int64)
        case heartbeat
    }

    private struct State {
        package var streams: [EnvironmentKey: [Int: Stream]] = [:]
        package var count = 0
        package var perKey: [String: Int] = [:]
        package var perAddress: [String: Int] = [:]
        package var nextId = 0
        package var heartbeat: Task<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())
    private let heartbeatSeconds: Double
    private let bufferSize: Int
    private let caps: Caps
    /// Whether a credential still opens streams at a time (Unix seconds).
    private let isValid: @Sendable (Credential, Int64) -> Bool

    /// Creates a hub that hears `events` and sends a heartbeat every `heartbeatSeconds` while
    /// any stream is open; at each heartbeat, streams whose credential `isValid` refuses end.
    package init(
        events: PublishEvents,
        heartbeatSeconds: Double,
        bufferSize: Int = 16,
        caps: Caps = .unlimited,
        isValid: @escaping @Sendable (Credential, Int64) -> Bool = { _, _ in true }
    ) {
        self.caps = caps
        self.heartbeatSeconds = heartbeatSeconds
        self.bufferSize = bufferSize
        self.isValid = isValid
        events.observe { [weak self] event in self?.deliver(event) }
    }

    /// Whether a stream for this key and address would be within the caps now. Streams are
    /// counted when their body starts (``connect(_:credential:address:)``), so streams opened at
    /// the same instant can pass one or two beyond a cap.
    package func admits(keyId: String, address: String) -> Refusal? {
        state.withLockedValue { state in
            if state.perKey[keyId, default: 0] >= caps.perKey { return Refusal(scope: .key, limit: caps.perKey) }
            if state.perAddress[address, default: 0] >= caps.perAddress {
                return Refusal(scope: .address, limit: caps.perAddress)
            }
            return nil
        }
    }

    /// A new stream of `environment`'s items; call ``disconnect(_:from:)`` with its id when done.
    package func connect(
        _ environment: EnvironmentKey,
        credential: Credential,
        address: String
    ) -> (id: Int, items: AsyncStream<Item>) {
        let (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = state.withLockedValue { state in
            state.nextId += 1
            state.streams[environment, default: [:]][state.nextId] = Stream(
                continuation: continuation,
                credential: credential,
                address: address
            )
            state.count += 1
            state.perKey[credential.keyId, default: 0] += 1
            state.perAddress[address, default: 0] += 1
            if state.heartbeat == nil { state.heartbeat = Task { await self.beat() } }
            return state.nextId
        }
        return (id, items)
    }

    /// Forgets a stream (its writer ended).
    package func disconnect(_ id: Int, from environment: EnvironmentKey) {
        let (continuation, heartbeat) = state.withLockedValue { state in
            let continuation = state.streams[environment]?.removeValue(forKey: id)
            if state.streams[environment]?.isEmpty == true { state.streams[environment] = nil }
            if let stream = continuation {
                state.count -= 1
                Self.decrement(&state.perKey, stream.credential.keyId)
                Self.decrement(&state.perAddress, stream.address)
            }
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

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        let remaining = counts[key, default: 1] - 1
        counts[key] = remaining > 0 ? remaining : nil
    }

    /// Ends every stream a key opened: it was just revoked on this node.
    package func closeStreams(ofKey keyId: String) {
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
    package var openStreams: Int { state.withLockedValue { $0.count } }

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
