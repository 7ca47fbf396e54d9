import Foundation

@testable import Vane

/// A clock that stands still until the test moves it: the client's backoff, fetch interval and
/// timers read its time, and its pauses wake only when ``advance(by:)`` passes their end. Tests of
/// time then take no time and cannot race a loaded machine.
final class ManualClock: Sendable {
    private struct Sleeper {
        var until: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [Int: Sleeper] = [:]
        /// Sleepers cancelled before they were registered.
        var cancelled: Set<Int> = []
        var nextId = 0
        var pauses: [TimeInterval] = []
    }

    private let state: LockedValue<State>

    /// A clock that starts at `start` (a fixed date, so times in assertions are exact).
    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = LockedValue(State(now: start))
    }

    /// The clock as the SDK takes it.
    var sdkClock: SDKClock {
        SDKClock(now: { [self] in now }, wait: { [self] seconds in try await sleep(seconds) })
    }

    var now: Date { state.withLockedValue { $0.now } }

    /// Tasks waiting on the clock now.
    var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    /// Every pause asked for, in order (after the SDK's clamping).
    var pauses: [TimeInterval] { state.withLockedValue { $0.pauses } }

    /// Moves the time on and wakes every pause that has ended.
    func advance(by seconds: TimeInterval) {
        let woken = state.withLockedValue { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.addingTimeInterval(seconds)
            let now = state.now
            let due = state.sleepers.filter { $0.value.until <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.sorted { $0.value.until < $1.value.until }.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    private func sleep(_ seconds: TimeInterval) async throws {
        let id = state.withLockedValue { state in
            state.pauses.append(seconds)
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLockedValue { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    let until = state.now.addingTimeInterval(seconds)
                    if until <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(until: until, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
