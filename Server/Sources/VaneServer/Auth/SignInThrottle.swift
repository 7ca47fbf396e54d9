import NIOConcurrencyHelpers

/// Counts failed sign-ins per account and per address, and refuses further attempts for a while
/// once either has failed too often: password guessing gets a handful of tries per quarter hour,
/// however many addresses or accounts it spreads over.
///
/// Only failures count, and a success clears the account's count. Held in memory per node.
final class SignInThrottle: Sendable {
    /// Failures an account may have in a window.
    let perAccount: Int
    /// Failures an address may have in a window (higher: an office behind one NAT).
    let perAddress: Int
    /// The window, in milliseconds.
    let windowMilliseconds: Int64

    private struct Failures {
        var count: Int
        var windowStart: Int64
    }

    private let state = NIOLockedValueBox<[String: Failures]>([:])

    /// A throttle: by default 5 failures per account and 30 per address per 15 minutes.
    init(perAccount: Int = 5, perAddress: Int = 30, windowMilliseconds: Int64 = 15 * 60 * 1000) {
        self.perAccount = perAccount
        self.perAddress = perAddress
        self.windowMilliseconds = windowMilliseconds
    }

    /// The seconds to wait before trying again, or nil when an attempt may go ahead.
    func refusal(email: String, address: String, now: Int64 = Clock.nowMilliseconds()) -> Int? {
        state.withLockedValue { state in
            var wait: Int64 = 0
            for (key, limit) in [("account:" + email.lowercased(), perAccount), ("address:" + address, perAddress)] {
                guard let failures = state[key], now - failures.windowStart < windowMilliseconds else { continue }
                if failures.count >= limit { wait = max(wait, failures.windowStart + windowMilliseconds - now) }
            }
            return wait > 0 ? Int((wait + 999) / 1000) : nil
        }
    }

    /// Records a failed attempt.
    func recordFailure(email: String, address: String, now: Int64 = Clock.nowMilliseconds()) {
        state.withLockedValue { state in
            if state.count > 100_000 { state = state.filter { now - $0.value.windowStart < windowMilliseconds } }
            for key in ["account:" + email.lowercased(), "address:" + address] {
                if var failures = state[key], now - failures.windowStart < windowMilliseconds {
                    failures.count += 1
                    state[key] = failures
                } else {
                    state[key] = Failures(count: 1, windowStart: now)
                }
            }
        }
    }

    /// Clears an account's failures after a successful sign-in.
    func recordSuccess(email: String) {
        _ = state.withLockedValue { $0.removeValue(forKey: "account:" + email.lowercased()) }
    }
}
