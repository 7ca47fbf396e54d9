public import Foundation
public import Logging
import VaneCore

extension LocalEvaluationClient {
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
        /// template costs a 304. With ``followsEventStream`` on, polling is the fallback: a
        /// publish arrives through the stream at once.
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
        /// Whether ``LocalEvaluationClient/run()`` follows the server's event stream (`GET …/stream`,
        /// the one the app SDK's live updates use), so a publish is downloaded at once (default true).
        public var followsEventStream = true
        /// The pauses between stream reconnection attempts: 1, 2, 4 … up to 60 s with jitter by
        /// default. Attempts never stop; the server's `retry:` is the shortest pause after a
        /// stream that was open.
        public var reconnect = BackoffPolicy(initial: 1, maximum: 60, jitter: 0.5)
        /// The longest silence the stream may have before the client reconnects (the server sends
        /// a heartbeat every 15 s by default).
        public var streamIdleTimeout: TimeInterval = 45
        /// A template file shipped with the service (baked into its container image, say): used
        /// at start when it is newer than ``cacheFile``'s, so the service has correct values while
        /// Vane is unreachable. The server's `template/compiled` JSON, or a template as published.
        public var templateFile: URL?
        /// Where the last downloaded template is kept (written atomically after each download),
        /// and read back at the next start. Its directory must exist and be writable.
        public var cacheFile: URL?
        /// The time downloads are stamped with, and the clock polling and reconnection wait on
        /// (tests set their own).
        var clock = SDKClock.system

        /// Creates a configuration (polling every 30 s by default).
        /// - Parameters:
        ///   - serverURL: The Vane server's base URL.
        ///   - project: The project id.
        ///   - environment: The environment id.
        ///   - serverKey: A `server` API key for the environment.
        ///   - pollInterval: Seconds between background checks in ``LocalEvaluationClient/run()``.
        ///   - timeout: Seconds a download waits for the server's answer.
        ///   - transport: How requests are sent.
        ///   - logger: Where refresh failures are logged.
        ///   - templateFile: A template file shipped with the service, used at start when newer
        ///     than the cache.
        ///   - cacheFile: Where the last downloaded template is kept and read back at start.
        public init(
            serverURL: URL,
            project: String,
            environment: String,
            serverKey: String,
            pollInterval: TimeInterval = 30,
            timeout: TimeInterval = 30,
            transport: any HTTPTransport = URLSessionTransport(),
            logger: Logger = Logger(label: "vane.local-evaluation"),
            templateFile: URL? = nil,
            cacheFile: URL? = nil
        ) {
            self.serverURL = serverURL
            self.project = project
            self.environment = environment
            self.serverKey = serverKey
            self.pollInterval = pollInterval
            self.timeout = timeout
            self.transport = transport
            self.logger = logger
            self.templateFile = templateFile
            self.cacheFile = cacheFile
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
}
