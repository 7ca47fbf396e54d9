import NIOConcurrencyHelpers
package import NIOCore

/// Feeds every open event stream on this node from one place: a publish is encoded once per
/// event format and written to each of its environment's streams on the stream's own event loop,
/// one hop per event loop, not a task per stream (``StreamSubscriber``); one clock sends all
/// heartbeats.
///
/// A stream connection is then its response's waiting task and one small object, which is what
/// lets a node hold ten thousand of them (docs/PERFORMANCE.md). A connection that stops reading
/// is skipped, keeping only the newest version it missed, so it never holds up a publish or
/// another connection; since every event names the newest version, a skipped event loses nothing.
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

    /// One environment's streams on one event loop. `members` is read and changed on `loop` only;
    /// the hub counts them under its lock.
    private final class LoopStreams: @unchecked Sendable {
        let loop: any EventLoop
        var members: [Int: StreamSubscriber] = [:]
        /// The newest version published, and whether a hop to the loop to write it is queued:
        /// publishes that come faster than the loop writes share one hop, and only the newest
        /// version goes out (every event names the newest version, so nothing is lost).
        private let newest = NIOLockedValueBox((version: Int64.min, queued: false))

        init(loop: any EventLoop) { self.loop = loop }

        /// From any thread: `version` is published.
        func publish(_ version: Int64) {
            let queue = newest.withLockedValue { newest -> Bool in
                newest.version = max(newest.version, version)
                defer { newest.queued = true }
                return !newest.queued
            }
            guard queue else { return }
            loop.execute {
                let version = self.newest.withLockedValue { newest -> Int64 in
                    newest.queued = false
                    return newest.version
                }
                self.deliver(version)
            }
        }

        /// On the loop: writes a version to every member, encoding it once per format.
        private func deliver(_ version: Int64) {
            var encoded: [String: ByteBuffer] = [:]
            for subscriber in members.values {
                let format = subscriber.format
                let event: ByteBuffer
                if let existing = encoded[format.name] {
                    event = existing
                } else {
                    event = format.encode(version)
                    encoded[format.name] = event
                }
                subscriber.deliver(version, event: event)
            }
        }
    }

    /// An environment's streams, by event loop, and how many there are.
    private struct EnvironmentStreams {
        var loops: [ObjectIdentifier: LoopStreams] = [:]
        var count: [ObjectIdentifier: Int] = [:]
    }

    private struct State {
        var environments: [EnvironmentKey: EnvironmentStreams] = [:]
        var count = 0
        var perKey: [String: Int] = [:]
        var perAddress: [String: Int] = [:]
        var nextId = 0
        var heartbeat: Task<Void, Never>?

        var allLoopStreams: [LoopStreams] { environments.values.flatMap { $0.loops.values } }
    }

    private let state = NIOLockedValueBox(State())
    private let heartbeatSeconds: Double
    private let caps: Caps
    /// Whether a credential still opens streams at a time (Unix seconds).
    private let isValid: @Sendable (Credential, Int64) -> Bool
    private static let heartbeatComment = ByteBuffer(string: ": heartbeat\n\n")

    /// Creates a hub that hears `events` and sends a heartbeat every `heartbeatSeconds` while
    /// any stream is open; at each heartbeat, streams whose credential `isValid` refuses end.
    package init(
        events: PublishEvents,
        heartbeatSeconds: Double,
        caps: Caps = .unlimited,
        isValid: @escaping @Sendable (Credential, Int64) -> Bool = { _, _ in true }
    ) {
        self.caps = caps
        self.heartbeatSeconds = heartbeatSeconds
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

    /// A new stream of `environment` on `channel`, written in `format`. Versions published from
    /// now on are kept for it until ``StreamSubscriber/run(after:)`` hands it over; call
    /// ``disconnect(_:from:)`` when it is done.
    package func connect(
        _ environment: EnvironmentKey,
        credential: Credential,
        address: String,
        channel: any Channel,
        format: StreamEventFormat
    ) -> StreamSubscriber {
        let loopId = ObjectIdentifier(channel.eventLoop)
        let (subscriber, group) = state.withLockedValue { state in
            state.nextId += 1
            let subscriber = StreamSubscriber(
                id: state.nextId,
                credential: credential,
                address: address,
                channel: channel,
                format: format
            )
            let group: LoopStreams
            if let existing = state.environments[environment]?.loops[loopId] {
                group = existing
            } else {
                group = LoopStreams(loop: channel.eventLoop)
                state.environments[environment, default: EnvironmentStreams()].loops[loopId] = group
            }
            state.environments[environment, default: EnvironmentStreams()].count[loopId, default: 0] += 1
            state.count += 1
            state.perKey[credential.keyId, default: 0] += 1
            state.perAddress[address, default: 0] += 1
            if state.heartbeat == nil { state.heartbeat = Task { await self.beat() } }
            return (subscriber, group)
        }
        // Queued before any publish that sees the new member: the loop runs its tasks in order.
        group.loop.execute { group.members[subscriber.id] = subscriber }
        return subscriber
    }

    /// Forgets a stream (its response ended).
    package func disconnect(_ subscriber: StreamSubscriber, from environment: EnvironmentKey) {
        let loopId = ObjectIdentifier(subscriber.channel.eventLoop)
        let (group, heartbeat) = state.withLockedValue { state -> (LoopStreams?, Task<Void, Never>?) in
            guard var streams = state.environments[environment], let group = streams.loops[loopId] else {
                return (nil, nil)
            }
            let remaining = streams.count[loopId, default: 1] - 1
            if remaining > 0 {
                streams.count[loopId] = remaining
            } else {
                streams.count[loopId] = nil
                streams.loops[loopId] = nil
            }
            state.environments[environment] = streams.loops.isEmpty ? nil : streams
            state.count -= 1
            Self.decrement(&state.perKey, subscriber.credential.keyId)
            Self.decrement(&state.perAddress, subscriber.address)
            var heartbeat: Task<Void, Never>?
            if state.count == 0 {
                heartbeat = state.heartbeat
                state.heartbeat = nil
            }
            return (group, heartbeat)
        }
        if let group {
            group.loop.execute {
                subscriber.finish()
                group.members[subscriber.id] = nil
            }
        }
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

    /// Ends the streams `shouldClose` picks, on their event loops. Their responses then finish
    /// and disconnect, which forgets them.
    private func close(where shouldClose: @escaping @Sendable (Credential, Int64) -> Bool) {
        let now = Clock.nowMilliseconds() / 1000
        for group in state.withLockedValue({ $0.allLoopStreams }) {
            group.loop.execute {
                for subscriber in group.members.values { subscriber.endIf { shouldClose($0, now) } }
            }
        }
    }

    /// The number of open streams.
    package var openStreams: Int { state.withLockedValue { $0.count } }

    private func deliver(_ event: PublishEvent) {
        let groups = state.withLockedValue { state in
            state.environments[event.environment].map { Array($0.loops.values) } ?? []
        }
        for group in groups { group.publish(event.versionNumber) }
    }

    private func beat() async {
        while !Task.isCancelled {
            try? await Task.sleep(nanoseconds: UInt64(heartbeatSeconds * 1_000_000_000))
            if Task.isCancelled { return }
            close { [isValid] credential, now in !isValid(credential, now) }
            for group in state.withLockedValue({ $0.allLoopStreams }) {
                group.loop.execute {
                    for subscriber in group.members.values { subscriber.heartbeat(Self.heartbeatComment) }
                }
            }
        }
    }
}
