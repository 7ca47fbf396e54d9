import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import VaneCore
import VaneServerCore

/// Liveness, readiness and Prometheus metrics. Health checks need no key; `/metrics` exists only
/// when the app gave a registry (`vane serve` does), and needs an admin or server key when
/// ``metricsKeys`` is set (`--metrics-require-key`).
///
/// Registered before ``AuthenticationMiddleware`` (a health check sends no key), so `/metrics`
/// authenticates by itself.
struct HealthRoutes {
    let readiness: Readiness
    /// What `/metrics` renders; nil: no `/metrics` route.
    let metrics: PrometheusCollectorRegistry?
    /// The keys `/metrics` accepts; nil: no key needed.
    var metricsKeys: KeyIndex?

    func register(on router: Router<VaneRequestContext>) {
        router.get("healthz") { _, _ in JSONResponse.make(["status": "ok"]) }
        router.get("readyz") { _, _ in
            readiness.isReady
                ? JSONResponse.make(["status": "ready"])
                : JSONResponse.make(["status": "starting"], status: .serviceUnavailable)
        }
        guard let metrics else { return }
        router.get("metrics") { request, _ in
            if let metricsKeys {
                guard let secret = APIKeyCredentials.secret(in: request.headers) else {
                    throw APIError.unauthenticated(
                        "/metrics needs an admin or server key: send Authorization: Bearer <key>"
                    )
                }
                guard let key = await metricsKeys.authenticate(secret: secret) else {
                    throw APIError.unauthenticated("the API key is unknown or revoked")
                }
                guard key.role == .admin || key.role == .server else {
                    throw APIError.permissionDenied(
                        "/metrics needs an admin or server key; the key \"\(key.name)\" is a \(key.role.rawValue) key"
                    )
                }
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer()))
            )
        }
    }
}

/// Whether the server has loaded what it serves.
final class Readiness: Sendable {
    private let ready = NIOLockedValueBox(false)

    /// Creates a not-yet-ready state.
    init() {}

    /// Whether requests can be served.
    var isReady: Bool { ready.withLockedValue { $0 } }

    /// Marks the server ready or not.
    func set(_ value: Bool) { ready.withLockedValue { $0 = value } }
}
