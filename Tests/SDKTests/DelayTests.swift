import Foundation
import Testing

@testable import Vane

/// Pauses whose length a server or proxy chooses are clamped to a day and never trap (issue #13:
/// `Retry-After: 1e11` or `retry:` of a huge number trapped converting to nanoseconds or stopped
/// fetching for ever).
@Suite struct DelayTests {
    @Test(arguments: ["1e11", "inf", "-inf", "nan", "NaN", "-5", "99999999999999999999999999"])
    func aHostileRetryAfterIsIgnoredOrClampedToADay(_ header: String) {
        let seconds = BackoffPolicy.retryAfter(header, now: Date())
        if let seconds {
            #expect(seconds >= 0 && seconds <= 86_400, "\(header) → \(seconds)")
        }
    }

    @Test func aLargeRetryAfterBecomesADay() {
        #expect(BackoffPolicy.retryAfter("1e11", now: Date()) == 86_400)
        #expect(BackoffPolicy.retryAfter("120", now: Date()) == 120)
        #expect(BackoffPolicy.retryAfter("inf", now: Date()) == nil)
        #expect(BackoffPolicy.retryAfter("nan", now: Date()) == nil)
        let future = "Fri, 31 Dec 9999 23:59:59 GMT"
        #expect(BackoffPolicy.retryAfter(future, now: Date()) == 86_400)
    }

    @Test func anAppsBackoffSettingsCannotPauseForMoreThanADay() {
        let policy = BackoffPolicy(initial: .infinity, maximum: .infinity, jitter: 0)
        #expect(policy.delay(afterFailures: 40) == 86_400)
        #expect(BackoffPolicy(initial: .nan, maximum: 10, jitter: 0).delay(afterFailures: 1) == 0)
    }

    @Test func everyPauseIsClampedAndSleepsWithoutTrapping() async throws {
        #expect(Delay.clamped(.nan) == 0)
        #expect(Delay.clamped(-1) == 0)
        #expect(Delay.clamped(1e300) == 86_400)
        #expect(Delay.milliseconds(.infinity) == 86_400_000)
        try await Delay.sleep(seconds: -.infinity)
        try await Delay.sleep(seconds: .nan)
        // A huge pause is a day, not a trap: cancel it at once.
        let task = Task { try await Delay.sleep(seconds: 1e300) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
