public import Foundation
import Logging
public import VaneCore

/// Server-side evaluation for Vapor and Hummingbird apps: the compiled template is downloaded
/// with a `server` key and every request's context is evaluated in-process, with no network call
/// per evaluation.
///
/// ```swift
/// let flags = LocalEvaluationClient(configuration: .init(
///     serverURL: vaneURL, project: "shop", environment: "production", serverKey: serverKey,
///     cacheFile: cacheURL))                      // starts from the last download, if any
/// try await flags.refresh()                    // once at startup
/// Task { await flags.run() }                    // keeps it current (or run it as a service)
///
/// router.get("checkout") { request, context in
///     let values = flags.evaluate(EvaluationContext(randomizationId: userID, attributes: ["plan": "pro"]))
///     return values.bool(forKey: "new_checkout", default: false) ? newCheckout() : oldCheckout()
/// }
/// ```
///
/// At creation the client reads ``Configuration/templateFile`` and ``Configuration/cacheFile``
/// (the newer wins, see ``startupTemplate``); without either, evaluations see an empty template
/// (every read returns the caller's default) until the first successful ``refresh()``. A failed
/// refresh keeps the template it has.
public final class LocalEvaluationClient: Sendable {
    struct Current: Sendable {
        var template: CompiledTemplate
        var etag: String?
        var version: Int64?
        /// When the server last confirmed this template as current (or the file was written).
        var confirmedAt: Date?
    }

    /// The configuration the client was created with.
    public let configuration: Configuration
    /// The template read from disk at creation, or nil when there was none.
    public let startupTemplate: StartupTemplate?
    private let current: LockedValue<Current>
    private let templates = Broadcaster<CompiledTemplate>(bufferSize: 1)
    private let liveConnection = LiveUpdateConnection()

    /// Creates a client with the template from ``Configuration/templateFile`` or
    /// ``Configuration/cacheFile`` (the newer), else an empty one; call ``refresh()`` or ``run()``
    /// to download the server's. A missing or unreadable file is logged, not thrown.
    ///
    /// ```swift
    /// let flags = LocalEvaluationClient(configuration: .init(
    ///     serverURL: vaneURL, project: "shop", environment: "production", serverKey: serverKey,
    ///     cacheFile: URL(fileURLWithPath: "/var/cache/shop/vane.json")))
    /// ```
    ///
    /// - Parameter configuration: The server, the project and environment, the server key, and
    ///   the files to start from.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let loaded = StartupTemplateReader.load(
            templateFile: configuration.templateFile,
            cacheFile: configuration.cacheFile,
            logger: configuration.logger
        )
        startupTemplate = loaded?.startup
        current = LockedValue(
            Current(
                template: loaded?.template ?? LocalEvaluationClient.emptyTemplate(),
                etag: nil,
                version: loaded?.startup.templateVersion,
                confirmedAt: loaded?.startup.savedAt
            )
        )
    }

    private static func emptyTemplate() -> CompiledTemplate {
        // A template with no parameters and no conditions always compiles.
        do { return try CompiledTemplate(ConfigTemplate()) } catch { preconditionFailure("an empty template compiles") }
    }

    /// The template in use.
    public var template: CompiledTemplate { current.withLockedValue { $0.template } }

    /// The version of the template in use, or nil before the first download.
    public var templateVersion: Int64? { current.withLockedValue { $0.version } }

    /// Seconds since the server last confirmed the template in use as current (a download or a
    /// 304), or since its file was written when it came from disk; nil while the client holds
    /// no template.
    public var templateAge: TimeInterval? {
        current.withLockedValue { $0.confirmedAt }.map { max(0, configuration.clock.now().timeIntervalSince($0)) }
    }

    /// Each new template the client starts using, from a download (a publish arrives here within
    /// moments while ``run()`` follows the event stream). Each access is a new subscription that
    /// keeps only the newest template a slow reader has not taken yet.
    public var templateUpdates: AsyncStream<CompiledTemplate> { templates.subscribe() }

    /// Where the event stream stands (`.stopped` unless ``run()`` follows it).
    public var streamState: LiveUpdateState { liveConnection.connectionState }

    /// Every change of ``streamState``. Each access is a new subscription.
    public var streamStates: AsyncStream<LiveUpdateState> { liveConnection.states.subscribe() }

    /// Evaluates a context against the template in use. No I/O.
    ///
    /// ```swift
    /// let values = flags.evaluate(EvaluationContext(randomizationId: userID, attributes: ["plan": "pro"]))
    /// if values.bool(forKey: "new_checkout", default: false) { … }
    /// ```
    ///
    /// - Parameter context: Who is asking: the randomization id and the attributes conditions read.
    /// - Returns: Every key's value for that context.
    public func evaluate(_ context: EvaluationContext) -> EvaluationResult {
        template.evaluate(context)
    }

    /// Downloads the template if it changed since the last download, and writes it to
    /// ``Configuration/cacheFile`` when one is set (a failed write is logged).
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
            let bytes = Array(response.body)
            let template: ConfigTemplate
            let compiled: CompiledTemplate
            do {
                template = try ConfigTemplate(data: bytes)
                compiled = try CompiledTemplate(template)
            } catch {
                throw .malformedResponse(reason: "the template cannot be used: \(error)")
            }
            let version = template.version?.versionNumber.flatMap { Int64($0) }
            let installed = current.withLockedValue { current in
                // Two downloads racing (polling and the stream): an older one never replaces a newer,
                // and the same version downloaded twice is installed and announced once.
                if let held = current.version, let version, version < held || (version == held && current.etag != nil) {
                    return false
                }
                current = Current(
                    template: compiled,
                    etag: response.header("ETag"),
                    version: version,
                    confirmedAt: configuration.clock.now()
                )
                return true
            }
            guard installed else { return false }
            writeCache(bytes)
            templates.send(compiled)
            return true
        case 304:
            current.withLockedValue { $0.confirmedAt = configuration.clock.now() }
            return false
        case 429, 500...599:
            let now = configuration.clock.now()
            let retryAfter = BackoffPolicy.retryAfter(response.header("Retry-After"), now: now) ?? 0
            throw .serverUnavailable(status: response.status, retryAt: now.addingTimeInterval(retryAfter))
        default:
            throw ServerConnection.rejection(response)
        }
    }

    private func writeCache(_ bytes: [UInt8]) {
        guard let cacheFile = configuration.cacheFile else { return }
        do {
            try AtomicFile.write(bytes, to: cacheFile)
        } catch {
            configuration.logger.warning("\(error)")
        }
    }

    /// Keeps the template current until the task is cancelled: follows the server's event
    /// stream (when ``Configuration/followsEventStream`` is on, reconnecting forever with
    /// backoff) and refreshes every ``Configuration/pollInterval`` seconds as a fallback.
    /// Failures are logged and retried at the next interval (or after `Retry-After`).
    public func run() async {
        if configuration.followsEventStream { liveConnection.start(self) }
        defer { if configuration.followsEventStream { liveConnection.halt(reporting: .stopped) } }
        while !Task.isCancelled {
            var pause = configuration.pollInterval
            do {
                try await refresh()
            } catch {
                configuration.logger.warning("template refresh failed: \(error)")
                if case .serverUnavailable(_, let retryAt) = error {
                    pause = max(pause, retryAt.timeIntervalSince(configuration.clock.now()))
                }
            }
            do {
                try await Delay.sleep(seconds: pause, minimum: 0.01, on: configuration.clock)
            } catch {
                return
            }
        }
    }
}

extension LocalEvaluationClient: LiveUpdateSubscriber {
    var streamConnection: ServerConnection { configuration.connection }
    var reconnectPolicy: BackoffPolicy { configuration.reconnect }
    var streamIdleTimeout: TimeInterval { configuration.streamIdleTimeout }
    var streamLogger: Logger { configuration.logger }
    var clock: SDKClock { configuration.clock }
    var heldTemplateVersion: Int64? { templateVersion }

    func catchUp() async throws(VaneError) -> LiveCatchUpResult {
        guard try await refresh() else { return .noChange }
        return .fetched(templateVersion: templateVersion ?? 0)
    }
}
