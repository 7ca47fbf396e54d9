// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
import Foundation
public import Logging
import Metrics
public import ServiceLifecycle
public import Vane
public import VaneCore

/// Vane's local evaluation client as a swift-service-lifecycle `Service`: add it to the
/// `ServiceGroup` and it keeps the template current (the server's event stream, with polling as
/// the fallback) until the group shuts down, recording metrics and logging as it goes.
///
/// ```swift
/// let vane = VaneService(configuration: .init(client: .init(
///     serverURL: vaneURL, project: "shop", environment: "production", serverKey: serverKey,
///     templateFile: URL(filePath: "/app/vane-template.json"),      // baked into the image
///     cacheFile: URL(filePath: "/var/cache/shop/vane-template.json"))))
/// let group = ServiceGroup(services: [vane, httpServer], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Values are correct from the first moment: at creation the service reads the template file
/// or the cache (the newer), so it starts with the values it last had even while Vane is
/// unreachable, and logs how old they are. Read values with ``evaluate(_:)`` or
/// ``value(forKey:context:in:)``, or through swift-configuration with `VaneConfigProvider`.
@available(VaneServerSDK, *)
public final class VaneService: Service, Sendable, CustomStringConvertible {
    /// The client that downloads and evaluates the template.
    public let client: LocalEvaluationClient
    /// The configuration the service was created with.
    public let configuration: Configuration
    let metrics: VaneServiceMetrics
    private let logger: Logger

    /// Creates the service and loads its startup template from disk (see
    /// `LocalEvaluationClient.Configuration.templateFile` and
    /// `LocalEvaluationClient.Configuration.cacheFile`). Nothing is downloaded until ``run()``.
    ///
    /// ```swift
    /// let vane = VaneService(configuration: .init(client: .init(
    ///     serverURL: URL(string: "https://flags.example.com")!,
    ///     project: "shop", environment: "production", serverKey: serverKey,
    ///     cacheFile: URL(fileURLWithPath: "/var/cache/shop/vane.json"))))
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: The client's configuration, where metrics go and how Vane is reached.
    ///   - logger: Where the service logs its startup template, new versions, stream connections
    ///     and failed downloads.
    public init(configuration: Configuration, logger: Logger = Logger(label: "vane.service")) {
        var clientConfiguration = configuration.client
        clientConfiguration.logger = logger
        if let transport = configuration.transport { clientConfiguration.transport = transport }
        self.configuration = configuration
        self.logger = logger
        client = LocalEvaluationClient(configuration: clientConfiguration)
        metrics = VaneServiceMetrics(
            project: configuration.client.project,
            environment: configuration.client.environment,
            factory: configuration.metricsFactory ?? MetricsSystem.factory
        )
        if let startup = client.startupTemplate {
            logger.notice(
                "starting from the \(startup.origin == .cacheFile ? "cached" : "shipped") template",
                metadata: [
                    "file": "\(startup.url.path)",
                    "template_version": "\(startup.templateVersion.map(String.init) ?? "none")",
                    "template_age_seconds": "\(Int(client.templateAge ?? 0))",
                ]
            )
        } else {
            logger.warning(
                "no template on disk: every value is the caller's default until the first download; set templateFile or cacheFile to start with values while Vane is unreachable"
            )
        }
        reportTemplate()
    }

    /// Names the service in ServiceGroup logs.
    public var description: String {
        "VaneService(\(configuration.client.project)/\(configuration.client.environment))"
    }

    /// Keeps the template current until the task is cancelled or the service group shuts down
    /// gracefully, then returns. Never throws: download failures are logged and retried, and
    /// the template in use stays.
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [vane, httpServer], gracefulShutdownSignals: [.sigterm], logger: logger)
    /// try await group.run()                      // the group calls run()
    /// ```
    ///
    /// - Throws: Nothing in practice; `Service` requires the `throws`.
    public func run() async throws {
        let states = client.streamStates
        let updates = client.templateUpdates
        logger.info("keeping the template current", metadata: ["server": "\(configuration.client.serverURL)"])
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.client.run() }
                group.addTask { await self.follow(states) }
                group.addTask { await self.follow(updates) }
                group.addTask { await self.reportAgeRegularly() }
            }
        }
        metrics.streamConnected.record(0)
        logger.info("stopped")
    }

    /// Evaluates every key for one context against the template in use, counting one evaluation.
    ///
    /// ```swift
    /// let values = vane.evaluate(EvaluationContext(randomizationId: userID, attributes: ["plan": "pro"]))
    /// let theme = values.string(forKey: "checkout_theme", default: "light")
    /// ```
    ///
    /// - Parameter context: Who is asking: the randomization id and the attributes conditions read.
    /// - Returns: Every key's value for that context.
    public func evaluate(_ context: EvaluationContext) -> EvaluationResult {
        metrics.evaluations.increment()
        return client.evaluate(context)
    }

    /// Evaluates one key for one context, counting one evaluation.
    ///
    /// ```swift
    /// let context = EvaluationContext(randomizationId: userID, attributes: ["plan": "pro"])
    /// let newFlow = vane.value(forKey: "checkout_new_flow", context: context)?.boolValue ?? false
    /// ```
    ///
    /// - Parameters:
    ///   - key: The Vane parameter key.
    ///   - context: Who is asking.
    ///   - template: The template to read (a snapshot's); by default the one in use.
    /// - Returns: nil when the template has no value for the key.
    public func value(
        forKey key: String,
        context: EvaluationContext,
        in template: CompiledTemplate? = nil
    ) -> CoercedValue? {
        metrics.evaluations.increment()
        return (template ?? client.template).value(forKey: key, context: context)
    }

    private func follow(_ states: AsyncStream<LiveUpdateState>) async {
        for await state in states {
            switch state {
            case .connected:
                metrics.streamConnected.record(1)
                logger.info("event stream connected")
            case .waitingToReconnect, .stopped, .paused:
                metrics.streamConnected.record(0)
            case .connecting:
                break
            }
        }
    }

    private func follow(_ updates: AsyncStream<CompiledTemplate>) async {
        for await template in updates {
            logger.info("new template in use", metadata: ["template_version": "\(template.versionNumber ?? "none")"])
            reportTemplate()
        }
    }

    private func reportAgeRegularly() async {
        while !Task.isCancelled {
            reportTemplate()
            do {
                try await Task.sleep(nanoseconds: UInt64(max(0.05, configuration.ageReportInterval) * 1_000_000_000))
            } catch {
                return
            }
        }
    }

    private func reportTemplate() {
        if let age = client.templateAge { metrics.templateAge.record(age) }
        metrics.templateVersion.record(client.templateVersion ?? 0)
    }
}
#endif
