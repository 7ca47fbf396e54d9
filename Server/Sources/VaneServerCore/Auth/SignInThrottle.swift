import NIOConcurrencyHelpers

/// Limits password guessing on the console's sign-in, after OWASP's device-cookie scheme
/// ("Slow Down Online Guessing Attacks with Device Cookies"):
///
/// - An attempt that presents a valid ``DeviceCookie`` for the account (the browser signed in to
///   it before) counts against that cookie only: ``perDevice`` failures lock out that cookie, not
///   the account.
/// - Any other attempt counts against the account's untrusted-client budget (``perAccount``)
///   and the address's (``perAddress``). Strangers' failures thus lock out only strangers.
///
/// Every attempt is counted before its password is checked (a reservation): attempts in progress
/// use up the budget like failures, so a burst of simultaneous guesses gets no more checks than
/// the same guesses one after another, and no more verifications run at once for one account,
/// address or device than its budget has left. A success gives its reservation back and clears
/// the failures of the budget it was counted in. Held in memory per node.
package final class SignInThrottle: Sendable {
    /// Failures the account may have from clients without its device cookie in a window.
    package let perAccount: Int
    /// Failures an address may have without device cookies in a window (higher: an office
    /// behind one NAT).
    package let perAddress: Int
    /// Failures one device cookie may have in a window before it is locked out itself.
    package let perDevice: Int
    /// The window, in milliseconds.
    package let windowMilliseconds: Int64

    /// What an attempt is counted against.
    package enum Budget: Hashable, Sendable {
        /// An account's attempts from clients without its device cookie (by email).
        case account(String)
        /// An address's attempts without a device cookie.
        case address(String)
        /// One device cookie's attempts (by its nonce).
        case device(String)
    }

    /// An attempt that may go ahead, already counted; settle it exactly once.
    package struct Reservation: Sendable {
        fileprivate let budgets: [Budget]
    }

    /// How an attempt ended.
    package enum Outcome: Sendable {
        /// The password matched: the reservation is given back and the budget's failures cleared.
        case succeeded
        /// Wrong email or password: the reservation becomes a failure.
        case failed
        /// Neither (the password matched a disabled account, the database failed): the reservation
        /// is given back.
        case withdrawn
    }

    private struct Counter {
        package var failures = 0
        package var inProgress = 0
        package var windowStart: Int64
    }

    private let counters = NIOLockedValueBox<[Budget: Counter]>([:])

    /// A throttle: by default 5 failures per account, 30 per address and 5 per device cookie per
    /// 15 minutes.
    package init(
        perAccount: Int = 5,
        perAddress: Int = 30,
        perDevice: Int = 5,
        windowMilliseconds: Int64 = 15 * 60 * 1000
    ) {
        self.perAccount = perAccount
        self.perAddress = perAddress
        self.perDevice = perDevice
        self.windowMilliseconds = windowMilliseconds
    }

    /// The budgets an attempt counts against: its device cookie's when it has a valid one,
    /// otherwise the account's and the address's.
    package static func budgets(email: String, address: String, device: String?) -> [Budget] {
        if let device { return [.device(device)] }
        return [.account(email.lowercased()), .address(address)]
    }

    /// Counts an attempt before its password is checked.
    /// - Returns: The reservation to settle, or the seconds to wait when a budget is used up
    ///   (then nothing is counted).
    package func reserve(_ budgets: [Budget], now: Int64 = Clock.nowMilliseconds()) -> Result<Reservation, Refusal> {
        counters.withLockedValue { counters in
            if counters.count > 100_000 {
                counters = counters.filter {
                    $0.value.inProgress > 0 || now - $0.value.windowStart < windowMilliseconds
                }
            }
            var wait: Int64 = 0
            var counted: [Counter] = []
            for budget in budgets {
                var counter = counters[budget] ?? Counter(windowStart: now)
                if now - counter.windowStart >= windowMilliseconds {
                    counter.failures = 0
                    counter.windowStart = now
                }
                if counter.failures + counter.inProgress >= limit(budget) {
                    wait = max(wait, counter.windowStart + windowMilliseconds - now, 1)
                }
                counter.inProgress += 1
                counted.append(counter)
            }
            // Refused by one budget: nothing is taken from the others.
            if wait > 0 { return .failure(Refusal(retryAfterSeconds: Int((wait + 999) / 1000))) }
            for (budget, counter) in zip(budgets, counted) { counters[budget] = counter }
            return .success(Reservation(budgets: budgets))
        }
    }

    /// Settles a reservation once the attempt's outcome is known.
    package func settle(_ reservation: Reservation, _ outcome: Outcome, now: Int64 = Clock.nowMilliseconds()) {
        counters.withLockedValue { counters in
            for budget in reservation.budgets {
                guard var counter = counters[budget] else { continue }
                counter.inProgress = max(counter.inProgress - 1, 0)
                switch outcome {
                case .failed:
                    if now - counter.windowStart >= windowMilliseconds {
                        counter.failures = 0
                        counter.windowStart = now
                    }
                    counter.failures += 1
                case .succeeded:
                    switch budget {
                    case .account, .device: counter.failures = 0
                    // A success on one account says nothing about the address's guesses at others.
                    case .address: break
                    }
                case .withdrawn:
                    break
                }
                if counter.failures == 0, counter.inProgress == 0 {
                    counters[budget] = nil
                } else {
                    counters[budget] = counter
                }
            }
        }
    }

    /// A budget used up: how long until it refills.
    package struct Refusal: Error, Sendable, Equatable {
        package var retryAfterSeconds: Int
    }

    private func limit(_ budget: Budget) -> Int {
        switch budget {
        case .account: perAccount
        case .address: perAddress
        case .device: perDevice
        }
    }
}
