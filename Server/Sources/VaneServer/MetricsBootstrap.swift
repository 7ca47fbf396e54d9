import Metrics
import NIOConcurrencyHelpers
import Prometheus
import VaneServerCore

/// Sets up swift-metrics with a Prometheus registry, once per process.
enum MetricsBootstrap {
    static let registry = PrometheusCollectorRegistry()
    private static let done = NIOLockedValueBox(false)

    static func bootstrap() {
        let shouldBootstrap = done.withLockedValue { done -> Bool in
            defer { done = true }
            return !done
        }
        if shouldBootstrap { MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry)) }
    }
}
