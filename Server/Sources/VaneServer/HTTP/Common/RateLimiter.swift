import NIOConcurrencyHelpers

/// Per-key token buckets for the serving endpoints (fetch, OFREP).
///
/// Each key may make `requestsPerSecond` requests per second on average, in bursts of up to
/// `burst`. A refused request learns how long to wait (`Retry-After`).
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    /// Requests per second per key; 0 turns limiting off.
    let requestsPerSecond: Double
    /// The largest burst.
    let burst: Double
    private let buckets = NIOLockedValueBox<[String: Bucket]>([:])

    /// Creates a limiter.
    init(requestsPerSecond: Double, burst: Double? = nil) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst ?? max(1, requestsPerSecond * 2)
    }

    /// Takes a token for `key`; returns nil when allowed, else the seconds to wait.
    func acquire(key: String) -> Int? {
        acquire(key: key, now: Clock.nowMilliseconds())
    }

    func acquire(key: String, now: Int64) -> Int? {
        guard requestsPerSecond > 0 else { return nil }
        return buckets.withLockedValue { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double(max(0, now - bucket.updated)) / 1000
            bucket.tokens = min(burst, bucket.tokens + elapsed * requestsPerSecond)
            bucket.updated = now
            defer { buckets[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            let wait = (1 - bucket.tokens) / requestsPerSecond
            return max(1, Int(wait.rounded(.up)))
        }
    }
}
