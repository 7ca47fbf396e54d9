import Dispatch
import Hummingbird
import Metrics
import NIOConcurrencyHelpers
import VaneServerCore

/// The floor under fetch's 304 path with the steps that path must take: what `POST /fetch` does
/// here, plus each step issue #32 asks vane to keep, done with vane's own types and nothing else.
///
/// 1. The API key: read from `Authorization` (`APIKeyCredentials`), hashed (`KeyDigest`) and
///    looked up in a dictionary under a lock, as `KeyIndex` does.
/// 2. The body, read up to fetch's 64 KiB, and its digest (`Digest128`), as fetch hashes it.
/// 3. The three token buckets (`RateLimiter`) at rates wrk cannot reach, as the benchmark's
///    limited node sets them, keyed by a fixed address (vane reads the peer's from the channel).
/// 4. The `If-None-Match` tag read and its proof checked (`ResultETag`) for this body.
/// 5. The request counted and timed under fetch's metric labels, with the Prometheus backend
///    vane serves `/metrics` from.
///
/// What it leaves out is what vane adds around those steps: the request context and the chain of
/// middleware, the route's environment, the served template's lookup, logging and errors. A fetch
/// that measures close to this route costs about what its steps cost.
///
/// With `?bytes=N` a request without a current tag gets a 200 with N bytes of JSON, as `/update`
/// answers: the floor under a full evaluation that takes the same steps, with no parsing of the
/// body, no evaluation and no assembly of the answer.
struct FetchStepsFloor: Sendable {
    /// The one client key this route accepts.
    static let clientKey = "vane_client_floor-key-0000000000000000000000000000"

    let keys: NIOLockedValueBox<[KeyDigest: String]>
    let limiter = RateLimiter(requestsPerSecond: [.client: 1_000_000, .address: 1_000_000, .key: 1_000_000])
    /// A version's proof scope as vane builds it: a prefix naming the environment, the version
    /// number, the template's digest and the experiments' digest.
    let scope =
        Array("vane-fetch-etag-1\u{0}bench\u{0}prod\u{0}".utf8) + [UInt8](repeating: 1, count: 8)
        + [UInt8](repeating: 2, count: 32) + [UInt8](repeating: 3, count: 32)
    let activeRequests = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", "POST")])
    /// A status's metrics, as vane keeps one set per route, method and status.
    struct StatusMetrics: Sendable {
        let requests: Counter
        let duration: Timer

        init(status: Int) {
            let dimensions = [
                ("http.route", "/v1/projects/{project}/environments/{environment}/fetch"),
                ("http.request.method", "POST"),
                ("http.response.status_code", String(status)),
            ]
            requests = Counter(label: "hb.requests", dimensions: dimensions)
            duration = Timer(
                label: "http.server.request.duration",
                dimensions: dimensions,
                preferredDisplayUnit: .seconds
            )
        }
    }
    let notModified = StatusMetrics(status: 304)
    let ok = StatusMetrics(status: 200)
    let bodies: UpdateBodies

    init(bodies: UpdateBodies) {
        keys = NIOLockedValueBox([KeyDigest(secret: Self.clientKey): "floor-key"])
        self.bodies = bodies
    }

    /// 304 when the request's tag proves its values for this body; else 200 with the tag to send
    /// (the benchmark asks once for it) and, with `?bytes=N`, N bytes of JSON; 401 without the
    /// key; 429 when a bucket is empty.
    @Sendable func respond(_ request: Request, context: some RequestContext) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        activeRequests.increment()
        var metrics = notModified
        defer {
            metrics.requests.increment()
            metrics.duration.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - started)
            activeRequests.decrement()
        }
        guard let secret = APIKeyCredentials.secret(in: request.headers),
            let keyId = keys.withLockedValue({ $0[KeyDigest(secret: secret)] })
        else { return Response(status: .unauthorized) }
        var buffer = try await request.body.collect(upTo: 64 << 10)
        let body = buffer.readBytes(length: buffer.readableBytes) ?? []
        let digest = Digest128(hashing: body)
        if limiter.acquire(keyId: keyId, address: "127.0.0.1", body: digest) != nil {
            return Response(status: .tooManyRequests)
        }
        let now = Clock.nowMilliseconds()
        if let tag = request.headers[.ifNoneMatch], let etag = ResultETag(tag.dropFirst().dropLast()),
            etag.isCurrent(scope: scope, body: digest, nowMilliseconds: now)
        {
            return Response(status: .notModified, headers: [.eTag: etag.headerValue])
        }
        let etag = ResultETag(values: Digest128(high: 1, low: 2), scope: scope, until: nil, body: digest)
        metrics = ok
        guard let size = request.uri.queryParameters.get("bytes", as: Int.self) else {
            return Response(status: .ok, headers: [.eTag: etag.headerValue])
        }
        guard let bytes = bodies.body(bytes: size) else { return Response(status: .badRequest) }
        return Response(
            status: .ok,
            headers: [.eTag: etag.headerValue, .contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: bytes)
        )
    }
}
