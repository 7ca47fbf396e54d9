public import Foundation
import Logging
public import VaneCore

/// Remote config for an app: typed reads, fetch and activate, a cache that survives restarts,
/// bundled defaults and local overrides.
///
/// ```swift
/// let client = VaneClient(configuration: configuration)   // loads the cache synchronously
/// if client[.newCheckout] { … }                          // reads never block on the network
/// Task { try await client.fetchAndActivate() }           // at launch, say
/// ```
///
/// A read takes the first value it finds in this order: a local override, the activated remote
/// config, the bundled defaults, the caller's default. Fetched values wait until ``activate()``,
/// so nothing on screen changes under the user unless the app decides.
///
/// The client is safe to use from any thread or task. Reads are a lock and a dictionary lookup.
///
/// For A/B tests it records an exposure the first time the app reads a key a running experiment
/// controls, and metric events with ``track(_:value:properties:)``; both wait in a queue kept on
/// disk until ``flush()`` or a timer sends them (``EventOptions``).
public final class VaneClient: RemoteConfigReader, Sendable {
    /// The configuration the client was created with.
    public let configuration: Configuration
    /// The id that percent rollouts bucket when no user id is set: random, kept per installation
    /// (shared with the app's extensions under ``StorageLocation/appGroup(_:)``).
    ///
    /// Before the device's first unlock after a restart the stored id cannot be read; until the
    /// client reads it (at its next fetch, flush, activation or override after the unlock) this is
    /// a provisional id that is never stored, and no events are recorded for it.
    public var installationId: String { state.withLockedValue { $0.installationId } }

    let files: ClientFiles?
    let state: LockedValue<State>
    /// Exposures and tracked events waiting for the server.
    let events: EventQueue
    let flushInFlight = LockedValue<Task<Result<Void, VaneError>, Never>?>(nil)
    let eventTimers = LockedValue(EventTimers())
    private let inFlight = LockedValue<Task<Result<FetchResult, VaneError>, Never>?>(nil)
    private let updateBroadcaster = Broadcaster<ConfigUpdate>()
    private let mismatchBroadcaster = Broadcaster<TypeMismatch>()
    let liveConnection = LiveUpdateConnection()

    struct State: Sendable {
        var installationId: String
        /// Whether ``installationId`` was made up because the stored one could not be read yet.
        var installationIdIsProvisional: Bool
        var context: ClientContext
        var active: FetchedConfig?
        var fetched: FetchedConfig?
        var overrides: [String: String]
        var resolved: ResolvedValues
        var backoff = BackoffState()
        var lastFetchError: VaneError?
        var reportedMismatches: Set<TypeMismatch> = []
        /// The exposures of the keys running experiments control in the active config, each
        /// recorded by the key's first read, then nil. Made anew by every resolution.
        var exposures = PendingExposures()

        mutating func resolve(defaults: InAppDefaults) -> Set<String> {
            let old = resolved
            resolved = ResolvedValues(overrides: overrides, active: active, defaults: defaults)
            exposures = PendingExposures(active: active, resolved: resolved)
            return ResolvedValues.changedKeys(from: old, to: resolved)
        }
    }

    /// Creates a client and loads its cache, overrides and installation id from disk, synchronously;
    /// writes happen off the caller's thread.
    ///
    /// A missing or corrupt file is not an error: the client starts without it (from the bundled
    /// defaults) and logs why. A file that is there but cannot be read yet (before the device's
    /// first unlock) is left untouched and read again later (docs/SDK.md, "Platforms").
    ///
    /// ```swift
    /// let client = VaneClient(configuration: .init(
    ///     serverURL: URL(string: "https://flags.example.com")!,
    ///     project: "shop", environment: "production", clientKey: "vane_client_…"))
    /// ```
    ///
    /// - Parameter configuration: Where the server is, who the app is, and how the client behaves.
    public convenience init(configuration: Configuration) {
        self.init(configuration: configuration, platform: .current)
    }

    /// A client whose storage is decided from the given platform facts (tests inject them).
    init(configuration: Configuration, platform: StoragePlatform) {
        self.configuration = configuration
        let logger = configuration.logger
        let plan: StoragePlan?
        do {
            plan = try StoragePlan.make(
                configuration.storage,
                project: configuration.project,
                environment: configuration.environment,
                platform: platform
            )
        } catch {
            logger.error("\(error)")
            plan = try? StoragePlan.make(
                .applicationSupport,
                project: configuration.project,
                environment: configuration.environment,
                platform: platform
            )
        }
        let files = plan.flatMap { ClientFiles(plan: $0, logger: logger) }
        self.files = files
        var cache: ConfigCacheFile?
        if case .found(let file)? = files?.loadCache() { cache = file }
        var overrides: [String: String] = [:]
        if case .found(let stored)? = files?.loadOverrides() { overrides = stored }
        let storedId = files?.loadInstallationId()
        let provisional = files != nil && storedId == nil
        events = EventQueue(
            file: files?.eventsURL,
            capacity: configuration.events.maximumQueuedEvents,
            logger: logger
        )
        let resolved = ResolvedValues(overrides: overrides, active: cache?.active, defaults: configuration.defaults)
        state = LockedValue(
            State(
                installationId: storedId ?? UUID().uuidString.lowercased(),
                installationIdIsProvisional: provisional,
                context: configuration.context,
                active: cache?.active,
                fetched: cache?.fetched,
                overrides: overrides,
                resolved: resolved,
                exposures: PendingExposures(active: cache?.active, resolved: resolved)
            )
        )
    }

    // MARK: - Reading

    /// The value for a key and its source, or nil when no override, remote value or default has it.
    ///
    /// The first read of a key a running experiment controls after an activation records an
    /// ``Exposure``.
    ///
    /// ```swift
    /// if client.value(forKey: "checkout_variant")?.source == .override { showOverrideBadge() }
    /// ```
    ///
    /// - Parameter key: The key's name on the server.
    /// - Returns: The first value found, with where it came from; nil when no source has the key.
    public func value(forKey key: String) -> ResolvedValue? {
        var exposure: Exposure?
        let value = state.withLockedValue { state -> ResolvedValue? in
            guard let position = state.resolved.table.position(of: key) else {
                exposure = state.exposures.take(absentKey: key)
                return nil
            }
            // A key outside every experiment costs one comparison here.
            exposure = state.exposures.take(at: position)
            // A value left in the cache file's bytes is made by its first read, and kept.
            return state.resolved.value(at: position)
        }
        if var exposure {
            exposure.time = configuration.clock.now()
            recordExposure(exposure)
        }
        return value
    }

    /// Logs a typed read that found a value of another type and sends it to ``typeMismatches``,
    /// once per key, type and value.
    /// - Parameter mismatch: The key, the type asked for, the value found and its source.
    public func reportTypeMismatch(_ mismatch: TypeMismatch) {
        let isNew = state.withLockedValue { state in
            guard state.reportedMismatches.count < 1000 else { return false }
            return state.reportedMismatches.insert(mismatch).inserted
        }
        guard isNew else { return }
        configuration.logger.warning("\(mismatch)", metadata: ["key": "\(mismatch.key)"])
        mismatchBroadcaster.send(mismatch)
    }

    /// An immutable copy of every value as it resolves now.
    ///
    /// ```swift
    /// let values = client.snapshot()      // the layout and its flag from the same activation
    /// if values[.newLayout] { render(values.decode(Layout.self, forKey: "layout")) }
    /// ```
    ///
    /// - Returns: A snapshot that later activations and overrides leave unchanged.
    public func snapshot() -> RemoteConfigSnapshot {
        let (values, exposures) = state.withLockedValue { state in
            // Made once, so the snapshot's reads and the client's never write to a shared table.
            state.resolved.makeAll()
            return (state.resolved, state.exposures.byKey)
        }
        return RemoteConfigSnapshot(values: values, reporter: self, exposures: exposures)
    }

    /// Every key some source has a value for, sorted.
    public var keys: [String] {
        state.withLockedValue { $0.resolved.keys.sorted() }
    }

    /// The server's debug-menu details for a key, from the active config.
    /// - Parameter key: The key's name on the server.
    /// - Returns: Its title, description and category; nil when the active config has none.
    public func metadata(forKey key: String) -> KeyMetadata? {
        state.withLockedValue { $0.active?.metadata[key] }
    }

    func stateForDebugMenu() -> ([String: KeyMetadata], ResolvedValues) {
        state.withLockedValue { state in
            state.resolved.makeAll()
            return (state.active?.metadata ?? [:], state.resolved)
        }
    }

    /// The template version of the active values, or nil before the first activation.
    public var activeTemplateVersion: Int64? { state.withLockedValue { $0.active?.templateVersion } }

    /// The template version of fetched values waiting for ``activate()``, if any.
    public var pendingTemplateVersion: Int64? { state.withLockedValue { $0.fetched?.templateVersion } }

    /// The newest template version the client holds, fetched or active.
    var heldTemplateVersion: Int64? {
        state.withLockedValue { state in
            switch (state.active?.templateVersion, state.fetched?.templateVersion) {
            case (let active?, let fetched?): return max(active, fetched)
            case (let active, let fetched): return active ?? fetched
            }
        }
    }

    /// The error of the last fetch, or nil when it succeeded (or none ran).
    public var lastFetchError: VaneError? { state.withLockedValue { $0.lastFetchError } }

    // MARK: - Observing

    /// Every change to the values reads return: which keys and why. Each access is a new subscription.
    public var updates: AsyncStream<ConfigUpdate> { updateBroadcaster.subscribe() }

    /// How many ``updates`` subscriptions are open (tests check that watchers end).
    var updateSubscriberCount: Int { updateBroadcaster.subscriberCount }

    /// Typed reads that found a value of another type (once per key, type and value).
    public var typeMismatches: AsyncStream<TypeMismatch> { mismatchBroadcaster.subscribe() }

    // MARK: - Context

    /// Who this app instance is, as sent with each fetch.
    public var context: ClientContext { state.withLockedValue { $0.context } }

    /// Changes the context, for example after sign-in or when a custom signal changes.
    ///
    /// Active values stay as they are; the next fetch goes to the server even inside the
    /// minimum fetch interval.
    ///
    /// ```swift
    /// client.updateContext { $0.userId = account.id }          // the same variant on every device
    /// ```
    ///
    /// - Parameter change: Edits the context in place; it runs under the client's lock, so keep it short.
    public func updateContext(_ change: (inout ClientContext) -> Void) {
        state.withLockedValue { change(&$0.context) }
    }

    /// The context as the server reads it, as JSON text.
    func contextText(_ context: ClientContext, installationId: String) -> String {
        context.evaluationContext(installationId: installationId).json().serialized()
    }

    // MARK: - Fetch and activate

    /// What a fetch did.
    public enum FetchResult: Sendable, Hashable {
        /// New values arrived; they wait for ``VaneClient/activate()``.
        case fetched(templateVersion: Int64)
        /// The server confirmed that the values the client has are current.
        case noChange
        /// The last fetch is recent enough and the context is unchanged: nothing was sent.
        case notDue(nextFetchAt: Date)
    }

    /// Fetches this app instance's values, unless the last fetch is within the minimum interval
    /// and the context has not changed. Fetched values wait for ``activate()``.
    ///
    /// Only one fetch runs at a time: a call while one is in flight waits for it and gets its
    /// result. After a 429 or 5xx answer, fetches are refused until the backoff ends.
    ///
    /// ```swift
    /// try await client.fetch()      // the values wait…
    /// client.activate()             // …until the app applies them
    /// ```
    ///
    /// - Parameter minimumInterval: Overrides the configured minimum fetch interval for this call
    ///   (0 always fetches).
    /// - Returns: Whether new values arrived, the server confirmed the current ones, or no request
    ///   was due.
    /// - Throws: ``VaneError``; the active values are kept in every case.
    @discardableResult
    public func fetch(minimumInterval: TimeInterval? = nil) async throws(VaneError) -> FetchResult {
        let task = inFlight.withLockedValue { current in
            if let current { return current }
            let task = Task {
                self.recoverStorage()
                return await self.performFetch(minimumInterval: minimumInterval ?? configuration.minimumFetchInterval)
            }
            current = task
            return task
        }
        return try await task.value.get()
    }

    /// Makes fetched values the active ones, at once, and tells ``updates`` which keys changed.
    ///
    /// Call it where a change cannot surprise the user: at launch, or when a screen opens.
    ///
    /// ```swift
    /// try await client.fetch()                // in the background…
    /// if client.activate() { reloadHome() }   // …applied when the home screen appears
    /// ```
    ///
    /// - Returns: Whether there were fetched values to activate.
    @discardableResult
    public func activate() -> Bool {
        let update: ConfigUpdate? = state.withLockedValue { state in
            guard let fetched = state.fetched else { return nil }
            state.active = fetched
            state.fetched = nil
            let changed = state.resolve(defaults: configuration.defaults)
            return ConfigUpdate(changedKeys: changed, reason: .activation, templateVersion: fetched.templateVersion)
        }
        guard let update else { return false }
        saveCache()
        recoverStorageLater()
        if !update.changedKeys.isEmpty { updateBroadcaster.send(update) }
        return true
    }

    /// Activates the fetched keys `policy` allows: all of them (a full activation, when every
    /// updated key may be applied), or only those copied into the active config, the rest waiting.
    /// - Returns: What changed, or nil when nothing fetched is waiting.
    func applyLiveUpdate(policy: LiveApplyPolicy) -> LiveUpdate? {
        let declaredRealtime = Set(configuration.keys.filter(\.realtime).map(\.name))
        let outcome: (LiveUpdate, ConfigUpdate)? = state.withLockedValue { state in
            guard let fetched = state.fetched else { return nil }
            let active = state.active
            let fetchedEntries = fetched.entries
            let activeEntries = active?.entries ?? [:]
            var keys = Set(fetchedEntries.keys)
            keys.formUnion(activeEntries.keys)
            let updated = keys.filter { fetchedEntries[$0] != activeEntries[$0] }
            let applied: Set<String>
            switch policy {
            case .all: applied = updated
            case .none: applied = []
            case .allowlisted(let allowed):
                applied = updated.filter {
                    fetched.metadata[$0]?.realtime == true || allowed.contains($0) || declaredRealtime.contains($0)
                }
            }
            if policy != .none && applied == updated {
                state.active = fetched
                state.fetched = nil
            } else if !applied.isEmpty {
                // Only these keys change; the active config keeps its version, the rest waits in `fetched`.
                var merged =
                    active
                    ?? FetchedConfig(
                        entries: [:],
                        metadata: [:],
                        templateVersion: fetched.templateVersion,
                        etag: nil,
                        fetchedAt: fetched.fetchedAt,
                        contextText: fetched.contextText
                    )
                // One dictionary changed and set once: setting `entries` reads every value again.
                var entries = merged.entries
                for key in applied {
                    entries[key] = fetchedEntries[key]
                    merged.metadata[key] = fetched.metadata[key]
                }
                merged.entries = entries
                state.active = merged
            }
            let changed = state.resolve(defaults: configuration.defaults)
            return (
                LiveUpdate(
                    templateVersion: fetched.templateVersion,
                    updatedKeys: updated,
                    appliedKeys: applied,
                    pendingKeys: updated.subtracting(applied)
                ),
                ConfigUpdate(changedKeys: changed, reason: .liveUpdate, templateVersion: state.active?.templateVersion)
            )
        }
        guard let (update, configUpdate) = outcome else { return nil }
        saveCache()
        if !configUpdate.changedKeys.isEmpty { updateBroadcaster.send(configUpdate) }
        return update
    }

    /// Fetches, then activates whatever fetched values are waiting.
    ///
    /// ```swift
    /// .task { try? await client.fetchAndActivate() }      // at launch
    /// ```
    ///
    /// - Parameter minimumInterval: Overrides the configured minimum fetch interval for this call
    ///   (0 always fetches).
    /// - Returns: What the fetch did.
    /// - Throws: ``VaneError`` from the fetch; values fetched earlier are activated even then.
    @discardableResult
    public func fetchAndActivate(minimumInterval: TimeInterval? = nil) async throws(VaneError) -> FetchResult {
        do {
            let result = try await fetch(minimumInterval: minimumInterval)
            activate()
            return result
        } catch {
            activate()
            throw error
        }
    }

    private func performFetch(minimumInterval: TimeInterval) async -> Result<FetchResult, VaneError> {
        let result: Result<FetchResult, VaneError>
        do {
            result = .success(try await sendFetch(minimumInterval: minimumInterval))
        } catch {
            result = .failure(error)
        }
        state.withLockedValue { state in
            if case .failure(let error) = result { state.lastFetchError = error } else { state.lastFetchError = nil }
        }
        inFlight.withLockedValue { $0 = nil }
        if case .failure(let error) = result {
            configuration.logger.notice("\(error)")
        }
        return result
    }

    private func sendFetch(minimumInterval: TimeInterval) async throws(VaneError) -> FetchResult {
        let now = configuration.clock.now()
        let (context, installationId, latest, backoff) = state.withLockedValue {
            ($0.context, $0.installationId, $0.fetched ?? $0.active, $0.backoff)
        }
        let contextText = contextText(context, installationId: installationId)
        try backoff.check(now: now)
        if let latest, latest.contextText == contextText, now.timeIntervalSince(latest.fetchedAt) < minimumInterval {
            return .notDue(nextFetchAt: latest.fetchedAt.addingTimeInterval(minimumInterval))
        }
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        // Only an ETag that describes values this client holds: never one without its cache.
        if let etag = latest?.etag { headers["If-None-Match"] = etag }
        let request = configuration.connection.request(
            "POST",
            .fetch,
            headers: headers,
            body: Data(("{\"context\":" + contextText + "}").utf8)
        )
        let response = try await configuration.connection.send(request)
        switch response.status {
        case 200:
            let body: FetchResponseBody
            do {
                body = try FetchResponseBody(json: try JSONValue.parse(Array(response.body)))
            } catch let error as JSONParseError {
                throw .malformedResponse(reason: "the body is not JSON: \(error.description)")
            } catch let error as WireFormatError {
                throw .malformedResponse(reason: error.description)
            } catch {
                throw .malformedResponse(reason: "\(error)")
            }
            let version = body.templateVersion
            switch body.state {
            case .update, .noTemplate:
                let config = FetchedConfig(
                    entries: body.entries,
                    metadata: body.metadata,
                    templateVersion: version,
                    etag: response.header("ETag"),
                    fetchedAt: now,
                    contextText: contextText
                )
                state.withLockedValue { state in
                    state.fetched = config
                    state.backoff.succeeded()
                }
                saveCache()
                return .fetched(templateVersion: version)
            case .noChange:
                confirmLatest(at: now, contextText: contextText, etag: response.header("ETag"))
                return .noChange
            }
        case 304:
            confirmLatest(at: now, contextText: contextText, etag: response.header("ETag"))
            return .noChange
        case 429, 500...599:
            // From the answer, not from the request: Retry-After counts from when the response
            // arrived (RFC 9110), so a slow answer never lets the next request come early.
            let answered = configuration.clock.now()
            let retryAt = state.withLockedValue {
                $0.backoff.failed(response, policy: configuration.backoff, now: answered)
            }
            throw .serverUnavailable(status: response.status, retryAt: retryAt)
        default:
            throw ServerConnection.rejection(response)
        }
    }

    /// The server said the latest values are still current for this context. Its ETag may be
    /// new all the same (a publish that changed nothing for this user): keeping it lets the next
    /// poll be answered without evaluating.
    private func confirmLatest(at now: Date, contextText: String, etag: String?) {
        state.withLockedValue { state in
            state.backoff.succeeded()
            if state.fetched != nil {
                state.fetched?.fetchedAt = now
                state.fetched?.contextText = contextText
                if let etag { state.fetched?.etag = etag }
            } else {
                state.active?.fetchedAt = now
                state.active?.contextText = contextText
                if let etag { state.active?.etag = etag }
            }
        }
        saveCache()
    }

    // MARK: - Overrides

    /// The local overrides, by key.
    public var overrides: [String: String] { state.withLockedValue { $0.overrides } }

    /// Makes a key read `value` on this device until the override is removed, whatever the server
    /// says. Kept across launches, apart from the fetched config.
    ///
    /// ```swift
    /// client.setOverride("one_page", forKey: "checkout_variant")
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value as text, read with the same coercion rule as a remote value.
    ///   - key: The key's name on the server.
    public func setOverride(_ value: String, forKey key: String) {
        changeOverrides { $0[key] = value }
    }

    /// Overrides a declared key with a typed value.
    ///
    /// ```swift
    /// client.setOverride(true, forKey: .newCheckout)
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value, written as the key's text form.
    ///   - key: A key declared as a static property of ``RemoteKeys``.
    public func setOverride<Value>(_ value: Value, forKey key: RemoteKey<Value>) {
        setOverride(key.text(for: value), forKey: key.name)
    }

    /// Removes a key's override.
    /// - Parameter key: The key's name on the server.
    public func removeOverride(forKey key: String) {
        changeOverrides { $0[key] = nil }
    }

    /// Removes every override.
    public func removeAllOverrides() {
        changeOverrides { $0.removeAll() }
    }

    private func changeOverrides(_ change: (inout [String: String]) -> Void) {
        let (changed, version) = state.withLockedValue { state in
            change(&state.overrides)
            return (state.resolve(defaults: configuration.defaults), state.active?.templateVersion)
        }
        files?.saveOverrides { [state] in state.withLockedValue { $0.overrides } }
        recoverStorageLater()
        if !changed.isEmpty {
            updateBroadcaster.send(ConfigUpdate(changedKeys: changed, reason: .override, templateVersion: version))
        }
    }

    // MARK: - Persistence

    /// Writes the active and fetched configs together, off the caller's thread; each write takes
    /// the newest state, so writes that race end with the newest on disk.
    private func saveCache() {
        files?.saveCache { [state] in
            state.withLockedValue { ConfigCacheFile(active: $0.active, fetched: $0.fetched) }
        }
    }

    /// Returns once every file write scheduled so far is done (tests read the files after it).
    func waitForWrites() {
        files?.writer.waitForWrites()
    }

    /// Waits until every file write the client has scheduled so far is on disk: the cache after
    /// an activation, the overrides, the event queue.
    ///
    /// The client writes its files off the caller's thread, so `activate()` and `setOverride`
    /// never wait for the disk. An app need not call this: its process lives on after the write.
    /// A command-line tool or a test that exits right after changing something calls it before
    /// it exits, or the last writes end with the process.
    ///
    /// ```swift
    /// try await client.fetchAndActivate()
    /// try? await client.flush()
    /// await client.waitForPendingWrites()   // the next launch starts from this cache
    /// ```
    public func waitForPendingWrites() async {
        guard let writer = files?.writer else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            writer.enqueue { continuation.resume() }
        }
    }

    /// ``recoverStorage()`` on the writer's queue, when some file is waiting to be read.
    private func recoverStorageLater() {
        guard let files, files.hasUnreadableFiles || events.isWaitingForFile else { return }
        files.writer.enqueue { [weak self] in self?.recoverStorage() }
    }

    /// Reads the files that could not be read before (the device is unlocked now, say) and takes
    /// what they hold: the stored installation id replaces the provisional one, stored overrides
    /// come back under those set since, the stored cache is taken when nothing was fetched since,
    /// and stored events go before those recorded since. Nothing was written over them meanwhile.
    func recoverStorage() {
        guard let files, files.hasUnreadableFiles || events.isWaitingForFile else { return }
        let recovered = files.retryUnreadable()
        events.retryLoad()
        let update: ConfigUpdate? = state.withLockedValue { state in
            if let id = recovered.installationId {
                state.installationId = id
                state.installationIdIsProvisional = false
            }
            if case .found(let stored)? = recovered.overrides {
                state.overrides = stored.merging(state.overrides) { _, setSince in setSince }
            }
            if case .found(let stored)? = recovered.cache, state.active == nil, state.fetched == nil {
                state.active = stored.active
                state.fetched = stored.fetched
            }
            let changed = state.resolve(defaults: configuration.defaults)
            return changed.isEmpty
                ? nil
                : ConfigUpdate(
                    changedKeys: changed,
                    reason: .activation,
                    templateVersion: state.active?.templateVersion
                )
        }
        if recovered.overrides != nil { files.saveOverrides { [state] in state.withLockedValue { $0.overrides } } }
        if recovered.cache != nil { saveCache() }
        if let update { updateBroadcaster.send(update) }
    }

    /// The SDK's version, sent in `User-Agent`.
    public static let sdkVersion = "0.1.0"
}
