public import Foundation
public import Logging
public import VaneCore

extension VaneClient {
    /// Everything a client needs: where the server is, who the app is, and how it behaves.
    ///
    /// ```swift
    /// var configuration = VaneClient.Configuration(
    ///     serverURL: URL(string: "https://flags.example.com")!,
    ///     project: "shop", environment: "production", clientKey: "vane_client_…")
    /// configuration.defaults = try InAppDefaults(contentsOf: Bundle.main.url(forResource: "vane-defaults", withExtension: "json")!)
    /// #if DEBUG
    /// configuration.minimumFetchInterval = 0
    /// #endif
    /// ```
    public struct Configuration: Sendable {
        /// The Vane server's base URL.
        public var serverURL: URL
        /// The project id.
        public var project: String
        /// The environment id (`production`, `staging`, …).
        public var environment: String
        /// A `client` API key for the environment. It can only fetch this app instance's values.
        public var clientKey: String
        /// Who this app instance is; by default the bundle's version and the device's OS,
        /// language and country.
        public var context: ClientContext
        /// Values used until remote config has them, so the app works offline from its first launch.
        public var defaults: InAppDefaults
        /// Keys the app declares, for the debug menu's titles, sections and choices.
        public var keys: [KeyDescriptor]
        /// Where the cache, the overrides and the installation id are kept.
        public var storage: StorageLocation
        /// A fetch within this many seconds of the last successful one sends nothing (unless the
        /// context changed). One hour by default, as Firebase; set 0 in debug builds.
        public var minimumFetchInterval: TimeInterval
        /// Seconds a fetch waits for the server's complete answer.
        public var timeout: TimeInterval
        /// The pause after 429 and 5xx answers.
        public var backoff: BackoffPolicy
        /// How ``VaneClient/startLiveUpdates()`` applies new versions and reconnects.
        public var liveUpdates: LiveUpdateOptions
        /// How exposures and tracked events are queued and sent, and where exposures are passed on.
        public var events: EventOptions
        /// How requests are sent.
        public var transport: any HTTPTransport
        /// Where the client logs type mismatches, failed fetches and unreadable files. Keys never
        /// appear. By default ``defaultLogger``: the unified log on Apple platforms.
        public var logger: Logger
        /// Whether plain `http://` may reach a host other than this machine (default false:
        /// such a URL is refused with ``VaneError/invalidConfiguration(_:)`` before anything is
        /// sent, because the key would travel in clear text). Loopback is always allowed.
        public var allowsInsecureHTTP = false
        /// The largest response body the client accepts, in bytes (default 16 MiB); a larger one
        /// is refused and the active values stay.
        public var maximumResponseBytes = ServerConnection.defaultMaximumResponseBytes
        /// The time fetches, backoff and events read, and the clock their timers wait on (tests
        /// set their own).
        var clock = SDKClock.system

        /// Creates a configuration with the defaults described on each property.
        public init(
            serverURL: URL,
            project: String,
            environment: String,
            clientKey: String,
            context: ClientContext = .current(),
            defaults: InAppDefaults = InAppDefaults(),
            keys: [KeyDescriptor] = [],
            storage: StorageLocation = .applicationSupport,
            minimumFetchInterval: TimeInterval = 3600,
            timeout: TimeInterval = 30,
            backoff: BackoffPolicy = BackoffPolicy(),
            liveUpdates: LiveUpdateOptions = LiveUpdateOptions(),
            events: EventOptions = EventOptions(),
            transport: any HTTPTransport = URLSessionTransport(),
            logger: Logger = Configuration.defaultLogger
        ) {
            self.serverURL = serverURL
            self.project = project
            self.environment = environment
            self.clientKey = clientKey
            self.context = context
            self.defaults = defaults
            self.keys = keys
            self.storage = storage
            self.minimumFetchInterval = minimumFetchInterval
            self.timeout = timeout
            self.backoff = backoff
            self.liveUpdates = liveUpdates
            self.events = events
            self.transport = transport
            self.logger = logger
        }

        /// The logger a configuration starts with, labelled `vane`: on Apple platforms it writes to
        /// the unified log (`UnifiedLogHandler`: Console.app, subsystem the app's bundle
        /// identifier, category `vane`), whatever `LoggingSystem` was bootstrapped with; elsewhere
        /// it uses the bootstrapped handler (standard error unless the app chose another).
        public static var defaultLogger: Logger {
            #if canImport(os)
            return Logger(label: "vane") { UnifiedLogHandler(label: $0) }
            #else
            return Logger(label: "vane")
            #endif
        }

        /// How this configuration reaches the server.
        var connection: ServerConnection {
            ServerConnection(
                serverURL: serverURL,
                address: EnvironmentAddress(project: project, environment: environment),
                apiKey: clientKey,
                timeout: timeout,
                transport: transport,
                allowsInsecureHTTP: allowsInsecureHTTP,
                maximumResponseBytes: maximumResponseBytes
            )
        }
    }
}

extension InAppDefaults {
    /// Reads a defaults file: the server's `defaults?format=json` output or a hand-written list
    /// of `{"name", "description", "value"}` entries.
    /// - Throws: ``DefaultsFileError`` naming the file and, for malformed entries, their JSON paths.
    public init(contentsOf url: URL) throws(DefaultsFileError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw DefaultsFileError(path: url.path, message: "cannot read the file: \(error.localizedDescription)")
        }
        do {
            try self.init(data: Array(data))
        } catch {
            throw DefaultsFileError(path: url.path, message: error.description)
        }
    }
}

/// A bundled defaults file that cannot be used.
public struct DefaultsFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What is wrong, with JSON paths.
    public var message: String

    /// Creates an error.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// The file and the problem.
    public var description: String { "\(path): \(message)" }
}
