// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
public import CoreMetrics
public import Foundation
public import Vane

@available(VaneServerSDK, *)
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
        /// How the service reaches Vane: ``HTTPClientTransport`` over async-http-client's shared
        /// client by default. Set it to nil to keep the transport of ``client`` instead (the
        /// SDK's `URLSessionTransport` unless you chose another).
        public var transport: (any HTTPTransport)?

        /// Creates a configuration.
        ///
        /// ```swift
        /// let configuration = VaneService.Configuration(
        ///     client: .init(serverURL: vaneURL, project: "shop", environment: "production", serverKey: serverKey),
        ///     metricsFactory: prometheus)            // else the bootstrapped MetricsSystem
        /// ```
        ///
        /// - Parameters:
        ///   - client: The local evaluation client's configuration: server, project, environment,
        ///     server key, polling, and the template and cache files it starts from.
        ///   - metricsFactory: Where metrics go; nil uses the one `MetricsSystem.bootstrap` installed.
        ///   - ageReportInterval: Seconds between updates of the template-age gauge.
        ///   - transport: How the service reaches Vane; nil keeps the transport in `client`.
        public init(
            client: LocalEvaluationClient.Configuration,
            metricsFactory: (any MetricsFactory)? = nil,
            ageReportInterval: TimeInterval = 1,
            transport: (any HTTPTransport)? = HTTPClientTransport()
        ) {
            self.client = client
            self.metricsFactory = metricsFactory
            self.ageReportInterval = ageReportInterval
            self.transport = transport
        }
    }
}
#endif
