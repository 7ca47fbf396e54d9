import Foundation

/// When a failed delivery is tried again: exponential backoff from ``firstDelaySeconds``,
/// doubling per attempt up to ``longestDelaySeconds``, each delay spread by ±20 % (jitter, so
/// endpoints that failed together do not retry together), until the delivery's give-up time.
package struct WebhookRetrySchedule: Sendable {
    /// The delay after the first failure.
    package var firstDelaySeconds: Double
    /// The longest delay between two attempts.
    package var longestDelaySeconds: Double = 6 * 3600

    package init(firstDelaySeconds: Double) {
        self.firstDelaySeconds = firstDelaySeconds
    }

    /// The delay after the `failures`-th failed attempt (from 1), before jitter.
    package func baseDelaySeconds(afterFailures failures: Int64) -> Double {
        let exponent = Double(min(max(failures - 1, 0), 40))
        return min(firstDelaySeconds * pow(2, exponent), longestDelaySeconds)
    }

    /// What follows a failed attempt made at `now`.
    package func outcome(
        afterFailures failures: Int64,
        now: Int64,
        giveUpTime: Int64,
        jitter: Double = Double.random(in: 0.8...1.2)
    ) -> WebhookAttemptOutcome {
        guard now < giveUpTime else { return .gaveUp }
        let delay = Int64((baseDelaySeconds(afterFailures: failures) * jitter * 1000).rounded())
        // The last attempt is made at the give-up time itself.
        return .retry(at: min(now + max(delay, 1), giveUpTime))
    }
}
