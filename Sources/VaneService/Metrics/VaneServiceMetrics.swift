// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
import CoreMetrics
import Foundation

/// The service's metrics, created once from one factory.
///
/// | label | kind | what |
/// |---|---|---|
/// | `vane_evaluations_total` | counter | values evaluated (one per key looked up) |
/// | `vane_template_age_seconds` | gauge | seconds since the server last confirmed the template in use (or its file was written) |
/// | `vane_template_version` | gauge | the version of the template in use (0: none) |
/// | `vane_stream_connected` | gauge | 1 while the event stream is open, else 0 |
///
/// Each carries the dimensions `project` and `environment`.
@available(VaneServerSDK, *)
struct VaneServiceMetrics: Sendable {
    let evaluations: Counter
    let templateAge: Gauge
    let templateVersion: Gauge
    let streamConnected: Gauge

    init(project: String, environment: String, factory: any MetricsFactory) {
        let dimensions = [("project", project), ("environment", environment)]
        evaluations = Counter(label: VaneService.MetricLabel.evaluations, dimensions: dimensions, factory: factory)
        templateAge = Gauge(label: VaneService.MetricLabel.templateAge, dimensions: dimensions, factory: factory)
        templateVersion = Gauge(
            label: VaneService.MetricLabel.templateVersion,
            dimensions: dimensions,
            factory: factory
        )
        streamConnected = Gauge(
            label: VaneService.MetricLabel.streamConnected,
            dimensions: dimensions,
            factory: factory
        )
    }
}

@available(VaneServerSDK, *)
extension VaneService {
    /// The labels of the metrics the service records (through swift-metrics).
    public enum MetricLabel {
        /// Counter: values evaluated, one per key looked up (`project`, `environment`).
        public static let evaluations = "vane_evaluations_total"
        /// Gauge: seconds since the server last confirmed the template in use, or since its file
        /// was written when the service started from disk.
        public static let templateAge = "vane_template_age_seconds"
        /// Gauge: the version of the template in use (0 while there is none).
        public static let templateVersion = "vane_template_version"
        /// Gauge: 1 while the event stream is open, else 0.
        public static let streamConnected = "vane_stream_connected"
    }
}
#endif
