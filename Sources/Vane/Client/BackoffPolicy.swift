public import Foundation

/// How long fetches pause after the server answers 429 or 5xx.
///
/// The n-th failure in a row pauses for `initial × 2ⁿ⁻¹`, capped at `maximum`, scaled by a random
/// factor in `1 - jitter … 1` so a fleet of devices does not retry in step. A `Retry-After` from the
/// server is honoured when it asks for longer. Plain network errors (offline, timeouts) start no
/// backoff: they say nothing about the server's load.
public struct BackoffPolicy: Sendable, Hashable {
    /// The first pause.
    public var initial: TimeInterval
    /// The longest pause.
    public var maximum: TimeInterval
    /// The fraction of each pause that is randomized, from 0 to 1.
    public var jitter: Double

    /// Creates a policy; the defaults pause 30 s, then 1, 2, 4 … minutes up to an hour.
    /// - Parameters:
    ///   - initial: Seconds of the first pause.
    ///   - maximum: Seconds of the longest pause.
    ///   - jitter: The fraction of each pause that is randomized, clamped to 0 … 1.
    public init(initial: TimeInterval = 30, maximum: TimeInterval = 3600, jitter: Double = 0.5) {
        self.initial = initial
        self.maximum = maximum
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The pause after `failures` failures in a row (at least 1), before `Retry-After`.
    /// Never more than a day, whatever ``initial`` and ``maximum`` say.
    /// - Parameters:
    ///   - failures: The failures in a row so far; less than 1 counts as 1.
    ///   - random: A number in `0 ..< 1` that picks the jitter (tests pass a fixed one).
    /// - Returns: The pause in seconds.
    public func delay(afterFailures failures: Int, random: Double = Double.random(in: 0..<1)) -> TimeInterval {
        let exponent = Double(min(max(failures, 1) - 1, 30))
        let base = min(initial * pow(2, exponent), maximum)
        return Delay.clamped(base * (1 - jitter * random))
    }

    /// Reads a `Retry-After` header: seconds, or an HTTP date; nil when it is neither, or not a
    /// finite number (`inf`, `nan`). At most a day: a proxy's `Retry-After: 1e11` must not stop
    /// fetching for ever.
    /// - Parameters:
    ///   - header: The header's value, if the response had one.
    ///   - now: The time an HTTP date is measured from.
    /// - Returns: The seconds to wait, or nil when the header is absent or unreadable.
    public static func retryAfter(_ header: String?, now: Date) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = TimeInterval(header) {
            guard seconds.isFinite, seconds >= 0 else { return nil }
            return Delay.clamped(seconds)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: header) else { return nil }
        return Delay.clamped(date.timeIntervalSince(now))
    }
}

/// Where one sender stands in its backoff: fetches and event batches keep one each, under the
/// same ``BackoffPolicy``.
struct BackoffState: Sendable, Hashable {
    /// 429 and 5xx answers in a row.
    private(set) var consecutiveFailures = 0
    /// When sending may start again; nil when it may now.
    private(set) var until: Date?

    /// Records a 429 or 5xx answer; returns when to try again (`Retry-After` honoured when it
    /// asks for longer).
    mutating func failed(_ response: TransportResponse, policy: BackoffPolicy, now: Date) -> Date {
        consecutiveFailures += 1
        var delay = policy.delay(afterFailures: consecutiveFailures)
        if let retryAfter = BackoffPolicy.retryAfter(response.header("Retry-After"), now: now) {
            delay = max(delay, retryAfter)
        }
        let retryAt = now.addingTimeInterval(delay)
        until = retryAt
        return retryAt
    }

    /// Records an answer: the backoff ends.
    mutating func succeeded() {
        consecutiveFailures = 0
        until = nil
    }

    /// Throws ``VaneError/backingOff(retryAt:)`` while the pause lasts at `now`.
    func check(now: Date) throws(VaneError) {
        if let until, now < until { throw .backingOff(retryAt: until) }
    }
}
