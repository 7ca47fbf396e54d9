public import CoreMetrics
public import Foundation
public import Vane

extension VaneService {
    /// What the service needs: the local evaluation client's configuration and where metrics go.
    public struct Configuration: Sendable {
        /// The client: server, project, environment, server key, stream and polling, and the
        /// template and cache files it starts from.
        public var client: LocalEvaluationClient.Configuration
        /// Where metrics go; nil (the default) uses the one `MetricsSystem.bootstrap` installed.
        public var metricsFactory: (any MetricsFactory)?
        /// Seconds between updates of the template-age gauge (default 1).
        public var ageReportInterval: TimeInterval

        /// Creates a configuration.
        public init(
            client: LocalEvaluationClient.Configuration,
            metricsFactory: (any MetricsFactory)? = nil,
            ageReportInterval: TimeInterval = 1
        ) {
            self.client = client
            self.metricsFactory = metricsFactory
            self.ageReportInterval = ageReportInterval
        }
    }
}
