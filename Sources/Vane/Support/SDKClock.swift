import Foundation

/// Where the SDK reads the time and how it waits: the system's clock in apps, a test's clock in
/// tests, so that backoff, fetch intervals, event timers and reconnection pauses are tested
/// without waiting for real time to pass.
///
/// Every pause still goes through ``Delay``, which clamps it before the clock waits.
struct SDKClock: Sendable {
    /// The current time.
    var now: @Sendable () -> Date
    /// Waits `seconds` (clamped by ``Delay`` already).
    /// - Throws: `CancellationError` when the task is cancelled.
    var wait: @Sendable (_ seconds: TimeInterval) async throws -> Void

    /// The system's clock and `Task.sleep`.
    static let system = SDKClock(
        now: { Date() },
        wait: { seconds in try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000)) }
    )
}
