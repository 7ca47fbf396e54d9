public import Foundation
public import Logging
public import VaneCore

/// Server-side evaluation for Vapor and Hummingbird apps: the compiled template is downloaded
/// with a `server` key and every request's context is evaluated in-process, with no network call
/// per evaluation.
///
/// ```swift
/// let flags = LocalEvaluationClient(configuration: .init(
///     serverURL: vaneURL, project: "shop", environment: "production", serverKey: serverKey))
/// try await flags.refresh()                    // once at startup
/// Task { await flags.run() }                    // keeps it current (or run it as a service)
///
/// router.get("checkout") { request, context in
///     let values = flags.evaluate(EvaluationContext(randomizationId: userID, attributes: ["plan": "pro"]))
///     return values.bool("new_checkout", default: false) ? newCheckout() : oldCheckout()
/// }
/// ```
///
/// Until the first successful ``refresh()``, evaluations see an empty template (every read
/// returns the caller's default). A failed refresh keeps the template it has.
public final class LocalEvaluationClient: Sendable {
    /// What the client needs.
    public struct Configuration: Sendable {
        /// The Vane server's base URL.
        public var serverURL: URL
        /// The project id.
        public var project: String
        /// The environment id.
        public var environment: String
        /// A `server` API key for the environment (it can read the whole template).
        public var serverKey: String
        /// Seconds between background checks in ``LocalEvaluationClient/run()``; an unchanged
        /// template costs a 304.
        public var pollInterval: TimeInterval
        /// Seconds a download waits for the server's answer.
        public var timeout: TimeInterval
        /// How requests are sent.
        public var transport: any HTTPTransport
        /// Where refresh failures are logged.
        public var logger: Logger
        /// Whether plain `http://` may reach a host other than this machine (default false:
        /// such a URL is refused with ``VaneError/invalidConfiguration(_:)`` before anything is
        /// sent, because the key would travel in clear text). Loopback is always allowed.
        public var allowsInsecureHTTP = false
        /// The largest response body the client accepts, in bytes (default 16 MiB); a larger one
        /// is refused and the active values stay.
        public var maximumResponseBytes = ServerConnection.defaultMaximumResponseBytes

        /// Creates a configuration (polling every 30 s by default).
        public init(
            serverURL: URL,
            project: String,
            environment: String,
            serverKey: String,
            pollInterval: TimeInterval = 30,
            timeout: TimeInterval = 30,
            transport: any HTTPTransport = URLSessionTransport(),
            logger: Logger = Logger(label: "vane.local-evaluation")
        ) {
            self.serverURL = serverURL
            self.project = project
            self.environment = environment
            self.serverKey = serverKey
            self.pollInterval = pollInterval
            self.timeout = timeout
            self.transport = transport
            self.logger = logger
        }

        /// How this configuration reaches the server.
        var connection: ServerConnection {
            ServerConnection(
                serverURL: serverURL,
                address: EnvironmentAddress(project: project, environment: environment),
                apiKey: serverKey,
                timeout: timeout,
                transport: transport,
                allowsInsecureHTTP: allowsInsecureHTTP,
                maximumResponseBytes: maximumResponseBytes
            )
        }
    }

    /// The configuration the client was created with.
    public let configuration: Configuration
    private let current: LockedValue<(template: CompiledTemplate, etag: String?, version: Int64?)>

    /// Creates a client with an empty template; call ``refresh()`` to download the real one.
    public init(configuration: Configuration) {
        self.configuration = configuration
        current = LockedValue((LocalEvaluationClient.emptyTemplate(), nil, nil))
    }

    private static func emptyTemplate() -> CompiledTemplate {
        // A template with no parameters and no conditions always compiles.
        do { return try CompiledTemplate(ConfigTemplate()) } catch { preconditionFailure("an empty template compiles") }
    }

    /// The template in use.
    public var template: CompiledTemplate { current.withLockedValue { $0.template } }

    /// The version of the template in use, or nil before the first download.
    public var templateVersion: Int64? { current.withLockedValue { $0.version } }

    /// Evaluates a context against the template in use. No I/O.
    public func evaluate(_ context: EvaluationContext) -> EvaluationResult {
        template.evaluate(context)
    }

    /// Downloads the template if it changed since the last download.
    /// - Returns: Whether a new template is now in use.
    /// - Throws: ``VaneError``; the template in use is kept.
    @discardableResult
    public func refresh() async throws(VaneError) -> Bool {
        var headers = ["Accept": "application/json"]
        if let etag = current.withLockedValue({ $0.etag }) { headers["If-None-Match"] = etag }
        let request = configuration.connection.request("GET", .compiledTemplate, headers: headers)
        let response = try await configuration.connection.send(request)
        switch response.status {
        case 200:
            let template: ConfigTemplate
            let compiled: CompiledTemplate
            do {
                template = try ConfigTemplate(data: Array(response.body))
                compiled = try CompiledTemplate(template)
            } catch {
                throw .malformedResponse(reason: "the template cannot be used: \(error)")
            }
            let version = template.version?.versionNumber.flatMap { Int64($0) }
            current.withLockedValue { $0 = (compiled, response.header("ETag"), version) }
            return true
        case 304:
            return false
        case 429, 500...599:
            let retryAfter = BackoffPolicy.retryAfter(response.header("Retry-After"), now: Date()) ?? 0
            throw .serverUnavailable(status: response.status, retryAt: Date().addingTimeInterval(retryAfter))
        default:
            throw ServerConnection.rejection(response)
        }
    }

    /// Refreshes every ``Configuration/pollInterval`` seconds until the task is cancelled.
    /// Failures are logged and retried at the next interval (or after `Retry-After`).
    public func run() async {
        while !Task.isCancelled {
            var pause = configuration.pollInterval
            do {
                try await refresh()
            } catch {
                configuration.logger.warning("template refresh failed: \(error)")
                if case .serverUnavailable(_, let retryAt) = error {
                    pause = max(pause, retryAt.timeIntervalSinceNow)
                }
            }
            do {
                try await Delay.sleep(seconds: pause, minimum: 0.01)
            } catch {
                return
            }
        }
    }
}
