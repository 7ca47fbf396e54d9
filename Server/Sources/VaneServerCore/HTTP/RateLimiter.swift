import NIOConcurrencyHelpers

/// Token buckets for the serving endpoints (fetch, OFREP), at three scopes at once: the client
/// (one address with one request body, so one app installation), the client's address (every
/// installation behind one NAT) and the key (every installation of the app).
///
/// A client key ships in every copy of an app, so one abuser holding it must not spend the
/// whole fleet's budget: the per-client and per-address limits refuse the abuser long before the
/// much higher per-key ceiling is reached, and a refused request takes no token from any scope.
/// Each limit allows `requestsPerSecond` on average in bursts of twice that. A refused request
/// learns which limit refused it and how long to wait (`Retry-After`).
package final class RateLimiter: Sendable {
    /// What a bucket counts.
    package enum Scope: String, Sendable, Hashable, CaseIterable {
        case client, address, key
    }

    /// A refusal: the scope whose bucket is empty and the whole seconds until it has a token.
    package struct Refusal: Sendable, Equatable {
        package var scope: Scope
        package var retryAfterSeconds: Int

        package init(scope: Scope, retryAfterSeconds: Int) {
            self.scope = scope
            self.retryAfterSeconds = retryAfterSeconds
        }
    }

    private struct BucketKey: Hashable {
        package var scope: Scope
        package var id: String
        package var digest: Digest128
    }

    private struct Bucket {
        package var tokens: Double
        package var updated: Int64
    }

    private struct State {
        package var buckets: [BucketKey: Bucket] = [:]
        /// The bucket count at which full buckets are next swept out.
        package var nextSweep = RateLimiter.minimumSweep
    }

    /// Requests per second per scope; a scope that is missing or 0 is not limited.
    package let requestsPerSecond: [Scope: Double]
    /// The same rates as fields: `acquire` runs on every fetch and looks them up without hashing.
    private let clientRate: Double?
    private let addressRate: Double?
    private let keyRate: Double?
    private let state = NIOLockedValueBox(State())

    package static let minimumSweep = 4096
    /// Beyond this many buckets even partly spent client and address buckets are forgotten (they
    /// start full again): memory stays bounded when millions of addresses each send one request.
    package static let maximumBuckets = 1_000_000

    /// Creates a limiter with a rate for each scope.
    package init(requestsPerSecond: [Scope: Double]) {
        self.requestsPerSecond = requestsPerSecond.filter { $0.value > 0 }
        clientRate = self.requestsPerSecond[.client]
        addressRate = self.requestsPerSecond[.address]
        keyRate = self.requestsPerSecond[.key]
    }

    /// A limiter with only a per-key rate (tests of the serving routes).
    package convenience init(requestsPerSecond: Double) {
        self.init(requestsPerSecond: [.key: requestsPerSecond])
    }

    /// The largest burst of a rate.
    package static func burst(_ rate: Double) -> Double { max(1, rate * 2) }

    /// The number of buckets held (tests of eviction).
    package var bucketCount: Int { state.withLockedValue { $0.buckets.count } }

    /// Takes a token from each scope's bucket, or from none when any is empty.
    /// - Parameters:
    ///   - keyId: The API key's id.
    ///   - address: The client's address.
    ///   - body: The digest of the request body, which tells installations behind one address
    ///     apart (their contexts differ).
    /// - Returns: nil when allowed, else the refusal.
    package func acquire(
        keyId: String,
        address: String,
        body: Digest128,
        now: Int64 = Clock.nowMilliseconds()
    ) -> Refusal? {
        // Runs on every fetch: with no limit set, nothing is built. With limits, no array or
        // closure is made either, and each bucket is hashed once.
        guard !requestsPerSecond.isEmpty else { return nil }
        let client = clientRate.map { (BucketKey(scope: .client, id: address, digest: body), $0) }
        let byAddress = addressRate.map { (BucketKey(scope: .address, id: address, digest: .zero), $0) }
        let byKey = keyRate.map { (BucketKey(scope: .key, id: keyId, digest: .zero), $0) }
        return state.withLockedValue { state in
            // Refilled in scope order; the first empty bucket refuses, and then no bucket is spent.
            var refusal: Refusal?
            func refilledBucket(_ entry: (key: BucketKey, rate: Double)?) -> Refilled? {
                guard refusal == nil, let (key, rate) = entry else { return nil }
                switch Self.refill(key, rate: rate, now: now, in: &state) {
                case .refused(let refused):
                    refusal = refused
                    return nil
                case .ready(let bucket): return bucket
                }
            }
            let refilled = (
                client: refilledBucket(client), address: refilledBucket(byAddress), key: refilledBucket(byKey)
            )
            if let refusal { return refusal }
            // Buckets found are spent in place first: adding a new one moves the others.
            Self.spend(refilled.client, found: true, in: &state)
            Self.spend(refilled.address, found: true, in: &state)
            Self.spend(refilled.key, found: true, in: &state)
            Self.spend(refilled.client, found: false, in: &state)
            Self.spend(refilled.address, found: false, in: &state)
            Self.spend(refilled.key, found: false, in: &state)
            if state.buckets.count >= state.nextSweep { sweep(&state, now: now) }
            return nil
        }
    }

    /// A bucket refilled up to `now`, and where it is in the dictionary (nil for a new one).
    private struct Refilled {
        var key: BucketKey
        var bucket: Bucket
        var index: Dictionary<BucketKey, Bucket>.Index?
    }

    /// A refilled bucket, or the refusal when it holds less than a token.
    private enum Refill {
        case ready(Refilled)
        case refused(Refusal)
    }

    /// Refills a bucket, hashing its key once; an empty one is stored refilled (it is not spent)
    /// and refuses.
    private static func refill(_ key: BucketKey, rate: Double, now: Int64, in state: inout State) -> Refill {
        let index = state.buckets.index(forKey: key)
        var bucket = index.map { state.buckets.values[$0] } ?? Bucket(tokens: burst(rate), updated: now)
        let elapsed = Double(max(0, now - bucket.updated)) / 1000
        bucket.tokens = min(burst(rate), bucket.tokens + elapsed * rate)
        bucket.updated = now
        guard bucket.tokens >= 1 else {
            if let index { state.buckets.values[index] = bucket } else { state.buckets[key] = bucket }
            let wait = (1 - bucket.tokens) / rate
            return .refused(Refusal(scope: key.scope, retryAfterSeconds: max(1, Int(wait.rounded(.up)))))
        }
        return .ready(Refilled(key: key, bucket: bucket, index: index))
    }

    /// Takes a token from a refilled bucket and stores it: in place when it was `found`, else added.
    private static func spend(_ refilled: Refilled?, found: Bool, in state: inout State) {
        guard let refilled, (refilled.index != nil) == found else { return }
        var bucket = refilled.bucket
        bucket.tokens -= 1
        if let index = refilled.index {
            state.buckets.values[index] = bucket
        } else {
            state.buckets[refilled.key] = bucket
        }
    }

    /// Forgets buckets that have refilled (they are the same as new ones), and past
    /// ``maximumBuckets`` every client and address bucket.
    private func sweep(_ state: inout State, now: Int64) {
        state.buckets = state.buckets.filter { key, bucket in
            guard let rate = requestsPerSecond[key.scope] else { return false }
            let elapsed = Double(max(0, now - bucket.updated)) / 1000
            return bucket.tokens + elapsed * rate < Self.burst(rate)
        }
        if state.buckets.count >= Self.maximumBuckets {
            state.buckets = state.buckets.filter { $0.key.scope == .key }
        }
        state.nextSweep = max(Self.minimumSweep, state.buckets.count * 2)
    }
}
