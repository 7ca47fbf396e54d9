import Foundation

/// Every pause the SDK takes goes through here, clamped, because its length can come from a
/// server or a proxy (`Retry-After`, an event stream's `retry:`) or from an app's settings: a
/// value such as `1e11`, `inf` or `nan` must neither trap converting to nanoseconds nor stop
/// fetching for ever.
enum Delay {
    /// The longest pause: a day.
    static let maximum: TimeInterval = 86_400

    /// `seconds` within 0 … ``maximum``; NaN is 0.
    static func clamped(_ seconds: TimeInterval) -> TimeInterval {
        guard !seconds.isNaN else { return 0 }
        return min(max(seconds, 0), maximum)
    }

    /// Sleeps for `seconds`, clamped, and at least `minimum`, on `clock`.
    /// - Throws: `CancellationError` when the task is cancelled.
    static func sleep(seconds: TimeInterval, minimum: TimeInterval = 0, on clock: SDKClock = .system) async throws {
        try await clock.wait(max(clamped(seconds), minimum))
    }

    /// Whole milliseconds, for log lines.
    static func milliseconds(_ seconds: TimeInterval) -> Int {
        Int(clamped(seconds) * 1000)
    }
}
