import Foundation
import Logging
import VaneCore

/// Runs one client's live updates: keeps the server's event stream open, reconnects forever, and
/// when the server announces a version newer than the client holds, has the client catch up
/// (``LiveUpdateSubscriber/catchUp()``: ``VaneClient`` fetches, bypassing the minimum fetch
/// interval and honouring backoff, and applies under the ``LiveApplyPolicy``;
/// ``LocalEvaluationClient`` downloads the compiled template).
///
/// Every (re)connection sends the newest version the client holds as `Last-Event-ID`; the server
/// answers with its current version when that is newer, so a publish made while the client was
/// away is fetched on reconnect.
final class LiveUpdateConnection: Sendable {
    private struct State {
        /// Changes on every start, stop and pause, so tasks of an earlier run cannot report.
        var generation = 0
        var connectionTask: Task<Void, Never>?
        var catchUpTask: Task<Void, Never>?
        var connection: LiveUpdateState = .stopped
        /// The newest version the client has caught up with (fetched, or confirmed unchanged).
        var knownVersion: Int64 = 0
        /// The newest version the server announced.
        var announcedVersion: Int64 = 0
    }

    private let state = LockedValue(State())
    let states = Broadcaster<LiveUpdateState>()
    let updates = Broadcaster<LiveUpdate>()

    var connectionState: LiveUpdateState { state.withLockedValue { $0.connection } }

    /// Starts the connection unless it runs.
    func start(_ client: any LiveUpdateSubscriber) {
        state.withLockedValue { state in
            guard state.connectionTask == nil else { return }
            state.generation += 1
            let generation = state.generation
            state.connectionTask = Task { await self.run(client, generation: generation) }
        }
    }

    /// Closes the stream, cancels a fetch in progress and reports `final` (`.stopped` or `.paused`).
    func halt(reporting final: LiveUpdateState) {
        let tasks = state.withLockedValue { state in
            state.generation += 1
            defer {
                state.connectionTask = nil
                state.catchUpTask = nil
            }
            return [state.connectionTask, state.catchUpTask]
        }
        for task in tasks { task?.cancel() }
        report(final, generation: nil)
    }

    private func report(_ new: LiveUpdateState, generation: Int?) {
        let changed = state.withLockedValue { state in
            if let generation, generation != state.generation { return false }
            guard state.connection != new else { return false }
            state.connection = new
            return true
        }
        if changed { states.send(new) }
    }

    // MARK: - The stream

    private func run(_ client: any LiveUpdateSubscriber, generation: Int) async {
        let reconnect = client.reconnectPolicy
        let logger = client.streamLogger
        var failures = 0
        while !Task.isCancelled {
            report(.connecting(attempt: failures), generation: generation)
            var serverRetry: TimeInterval?
            let reason: String
            do {
                let stream = try await client.streamConnection.openStream(request(client))
                if stream.status == 200 {
                    failures = 0
                    report(.connected, generation: generation)
                    var parser = ServerSentEventParser()
                    do {
                        for try await chunk in stream.body {
                            for event in try parser.feed(chunk) where event.type == VersionEvent.type {
                                guard let version = Self.version(of: event) else { continue }
                                announce(version, client: client, generation: generation)
                            }
                        }
                        reason = "the server ended the stream"
                    } catch TransportError.timedOut(let seconds) {
                        reason = "the stream was silent for \(seconds) s"
                    } catch let overflow as ServerSentEventParser.Overflow {
                        stream.close()
                        reason = overflow.description
                    } catch {
                        reason = "\(error)"
                    }
                    serverRetry = parser.retryMilliseconds.map { Delay.clamped(TimeInterval($0) / 1000) }
                } else {
                    stream.close()
                    reason = "the server answered HTTP \(stream.status)"
                }
            } catch .transport(let failure) {
                reason = failure.description
            } catch {
                reason = error.description
            }
            if Task.isCancelled { break }
            failures += 1
            var delay = reconnect.delay(afterFailures: failures)
            if failures == 1, let serverRetry {
                // The server's own pause, spread out so a restarted server is not hit by every client at once.
                delay = max(delay, serverRetry * (1 + reconnect.jitter * Double.random(in: 0..<1)))
            }
            delay = Delay.clamped(delay)
            let retryAt = client.clock.now().addingTimeInterval(delay)
            report(.waitingToReconnect(attempt: failures, retryAt: retryAt, reason: reason), generation: generation)
            logger.notice("live updates disconnected: \(reason); reconnecting in \(Delay.milliseconds(delay)) ms")
            try? await Delay.sleep(seconds: delay, on: client.clock)
        }
    }

    private func request(_ client: any LiveUpdateSubscriber) -> TransportRequest {
        var headers = ["Accept": "text/event-stream", "Cache-Control": "no-cache"]
        let known = max(state.withLockedValue { $0.knownVersion }, client.heldTemplateVersion ?? 0)
        if known > 0 { headers["Last-Event-ID"] = String(known) }
        return client.streamConnection.request(
            "GET",
            .stream,
            headers: headers,
            timeout: client.streamIdleTimeout
        )
    }

    /// The version a `version` event announces: `{"templateVersion": "N"}`, else its id.
    static func version(of event: ServerSentEvent) -> Int64? {
        VersionEvent(data: event.data, lastEventId: event.lastEventId)?.templateVersion
    }

    // MARK: - Catching up

    private func announce(_ version: Int64, client: any LiveUpdateSubscriber, generation: Int) {
        let held = client.heldTemplateVersion ?? 0
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            state.announcedVersion = max(state.announcedVersion, version)
            guard state.announcedVersion > max(state.knownVersion, held), state.catchUpTask == nil else { return }
            state.catchUpTask = Task { await self.catchUp(client, generation: generation) }
        }
    }

    /// Catches up until the client holds the newest announced version; waits out backoffs and
    /// retries failures, so an announced version is never dropped.
    private func catchUp(_ client: any LiveUpdateSubscriber, generation: Int) async {
        let reconnect = client.reconnectPolicy
        var failures = 0
        while !Task.isCancelled {
            let held = client.heldTemplateVersion ?? 0
            let target: Int64? = state.withLockedValue { state in
                guard state.generation == generation else { return nil }
                if state.announcedVersion <= max(state.knownVersion, held) {
                    state.catchUpTask = nil
                    return nil
                }
                return state.announcedVersion
            }
            guard let target else { return }
            let pause: TimeInterval
            do {
                switch try await client.catchUp() {
                case .fetched(let version):
                    markKnown(max(target, version))
                case .noChange:
                    markKnown(target)
                case .notDue:
                    break  // joined a fetch the app started with its own interval: ask again
                }
                failures = 0
                continue
            } catch {
                switch error {
                case .backingOff(let retryAt), .serverUnavailable(_, let retryAt):
                    pause = retryAt.timeIntervalSince(client.clock.now())
                default:
                    failures += 1
                    pause = reconnect.delay(afterFailures: failures)
                }
            }
            try? await Delay.sleep(seconds: pause, minimum: 0.01, on: client.clock)
        }
    }

    private func markKnown(_ version: Int64) {
        state.withLockedValue { $0.knownVersion = max($0.knownVersion, version) }
    }
}
