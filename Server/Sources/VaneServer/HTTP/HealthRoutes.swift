import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import VaneCore

/// Liveness, readiness and Prometheus metrics; no key needed.
struct HealthRoutes {
    let readiness: Readiness
    let registry: PrometheusCollectorRegistry

    func register(on router: Router<VaneRequestContext>) {
        router.get("healthz") { _, _ in JSONResponse.make(["status": "ok"]) }
        router.get("readyz") { _, _ in
            readiness.isReady
                ? JSONResponse.make(["status": "ready"])
                : JSONResponse.make(["status": "starting"], status: .serviceUnavailable)
        }
        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))
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
