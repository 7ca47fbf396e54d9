import Foundation
import Logging
import VaneCore

extension VaneClient: EventTracker {
    /// Records that the current unit (the user id, or else the installation id) did `name`, for
    /// experiments whose metrics read it. The event waits in the queue and goes to the server in
    /// a batch (``EventOptions``); it never blocks on the network.
    ///
    /// ```swift
    /// client.track("checkout_completed", value: 39.90, properties: ["currency": "EUR"])
    /// ```
    ///
    /// - Parameters:
    ///   - name: 1-100 letters, digits, `_`, `-`, `.`, `:` or `/`, as the experiment's metric
    ///     names it.
    ///   - value: An amount, a duration, a count, within ±10¹²; nil counts as 1.
    ///   - properties: At most 20, each value at most 256 characters: kept with the raw event
    ///     and exported, not analysed.
    ///
    /// An event that breaks these rules is logged with what to change and not queued: the server
    /// would refuse it.
    public func track(_ name: String, value: Double?, properties: [String: String]) {
        if let problem = TrackingRules.problem(name: name, value: value, properties: properties) {
            configuration.logger.warning("track(\"\(name.prefix(100))\") was not recorded: \(problem)")
            return
        }
        let (userId, installationId, provisional) = state.withLockedValue {
            ($0.context.userId, $0.installationId, $0.installationIdIsProvisional)
        }
        guard let unit = userId ?? (provisional ? nil : installationId) else {
            configuration.logger.notice(
                "track(\"\(name)\") was not recorded: the installation id cannot be read before the device's first unlock"
            )
            return
        }
        let event = QueuedEvent(
            id: events.nextId(),
            unit: unit,
            time: Self.milliseconds(configuration.clock.now()),
            kind: .metric(name: name, value: value, properties: properties)
        )
        enqueue(event)
    }

    /// Sends every waiting exposure and event, a batch at a time, and writes the queue to disk
    /// first so that what is not sent survives the app's end. Call it when the app goes to the
    /// background, and in tests.
    ///
    /// Events leave the queue once the server answered for them: stored, already stored (a
    /// retry), or refused for good (an exposure of an experiment that stopped meanwhile), which is
    /// logged. Anything else leaves them for the next flush.
    ///
    /// - Throws: ``VaneError/backingOff(retryAt:)`` during a pause after a 429 or 5xx,
    ///   ``VaneError/serverUnavailable(status:retryAt:)`` when the server answers so, and the
    ///   transport's errors when it cannot be reached. The events wait in every case.
    public func flush() async throws(VaneError) {
        let task = flushInFlight.withLockedValue { current in
            if let current { return current }
            let task = Task {
                self.recoverStorage()
                return await self.performFlush()
            }
            current = task
            return task
        }
        try await task.value.get()
    }

    /// Sends every waiting exposure and event as the app goes to the background, inside a
    /// background activity so that the system does not suspend the app halfway through the
    /// request; returns at once. Call it when the scene phase becomes `.background`:
    ///
    /// ```swift
    /// .onChange(of: scenePhase) { phase in          // iOS 15: the one-argument form
    ///     if phase == .background { client.flushInBackground() }
    /// }
    /// ```
    ///
    /// The activity is `ProcessInfo.performExpiringActivity` on Apple platforms (apps and app
    /// extensions may both use it, on every platform the SDK supports). When the system's time
    /// is up first, the activity ends and the events stay queued, on disk, for the next flush.
    public func flushInBackground() {
        flushInBackground(activity: .system)
    }

    /// ``flushInBackground()`` inside the given activity (tests inject one).
    @discardableResult
    func flushInBackground(activity: ExpiringActivity) -> Task<Void, Never> {
        activity.run(reason: "Vane: sending queued events") { [weak self] in
            try? await self?.flush()
        }
    }

    /// Exposures and tracked events waiting to be sent.
    public var queuedEventCount: Int { events.count }

    /// Events dropped because the queue was full (``EventOptions/maximumQueuedEvents``), since
    /// the client's first launch.
    public var droppedEventCount: Int { events.dropped }

    // MARK: - Internals

    /// Records an exposure the first time it is seen: queued for the server and passed to
    /// ``EventOptions/onExposure``.
    func recordExposure(_ exposure: Exposure) {
        // Values fetched for a provisional id (before the first unlock): not a unit of the experiment.
        let provisional = state.withLockedValue { $0.installationIdIsProvisional ? $0.installationId : nil }
        guard exposure.unit != provisional, events.markExposed(exposure.identity) else { return }
        enqueue(
            QueuedEvent(
                id: EventQueue.exposureId(exposure.identity),
                unit: exposure.unit,
                time: Self.milliseconds(exposure.time),
                kind: .exposure(
                    experiment: exposure.experiment,
                    variant: exposure.variant,
                    flagKey: exposure.flagKey,
                    templateVersion: exposure.templateVersion
                )
            )
        )
        configuration.events.onExposure?(exposure)
    }

    private func enqueue(_ event: QueuedEvent) {
        let waiting = events.append(event)
        // Once per batch that fills, not on every event while the server is unreachable.
        scheduleSending(batchFull: waiting % configuration.events.batchSize == 0)
    }

    /// Which of the queue's timers are set.
    struct EventTimers: Sendable {
        var persistScheduled = false
        var sendScheduled = false
    }

    /// Writes the queue within a second, and sends it after ``EventOptions/flushInterval`` or at
    /// once when a batch is full. One timer of each at a time.
    private func scheduleSending(batchFull: Bool) {
        let options = configuration.events
        let (persist, send) = eventTimers.withLockedValue { timers -> (Bool, Bool) in
            let persist = !timers.persistScheduled
            timers.persistScheduled = true
            let send = (batchFull || options.flushInterval > 0) && !timers.sendScheduled
            if send { timers.sendScheduled = true }
            return (persist, send)
        }
        let clock = configuration.clock
        if persist {
            Task { [weak self] in
                try? await Delay.sleep(seconds: 1, on: clock)
                guard let self else { return }
                self.eventTimers.withLockedValue { $0.persistScheduled = false }
                self.events.save()
            }
        }
        if send {
            let delay = batchFull ? 0 : options.flushInterval
            Task { [weak self] in
                if delay > 0 { try? await Delay.sleep(seconds: delay, on: clock) }
                guard let self else { return }
                self.eventTimers.withLockedValue { $0.sendScheduled = false }
                // Offline or backing off: send again an interval later while events wait. Only the
                // send timer: nothing new was recorded, so the file has nothing new to write.
                if (try? await self.flush()) == nil, self.events.count > 0, options.flushInterval > 0 {
                    self.scheduleRetry(after: options.flushInterval)
                }
            }
        }
    }

    private func scheduleRetry(after delay: TimeInterval) {
        let schedule = eventTimers.withLockedValue { timers in
            defer { timers.sendScheduled = true }
            return !timers.sendScheduled
        }
        guard schedule else { return }
        let clock = configuration.clock
        Task { [weak self] in
            try? await Delay.sleep(seconds: delay, on: clock)
            guard let self else { return }
            self.eventTimers.withLockedValue { $0.sendScheduled = false }
            if (try? await self.flush()) == nil, self.events.count > 0 { self.scheduleRetry(after: delay) }
        }
    }

    private func performFlush() async -> Result<Void, VaneError> {
        let result: Result<Void, VaneError>
        do {
            try await sendQueuedEvents()
            result = .success(())
        } catch {
            result = .failure(error)
        }
        events.save()
        flushInFlight.withLockedValue { $0 = nil }
        if case .failure(let error) = result { configuration.logger.notice("sending events: \(error)") }
        return result
    }

    private func sendQueuedEvents() async throws(VaneError) {
        events.save()
        let now = configuration.clock.now()
        try events.withBackoff { backoff throws(VaneError) in try backoff.check(now: now) }
        let connection = configuration.connection
        while true {
            let batch = events.oldest(configuration.events.batchSize)
            if batch.isEmpty { return }
            let body = JSONValue.object(["events": .array(batch.map { .object($0.json()) })]).serializedData(.compact)
            let response = try await connection.send(
                connection.request(
                    "POST",
                    .events,
                    headers: ["Content-Type": "application/json", "Accept": "application/json"],
                    body: Data(body)
                )
            )
            switch response.status {
            case 200:
                events.withBackoff { $0.succeeded() }
                logRefusals(response, batch: batch)
                events.remove(Set(batch.map(\.id)))
            case 400, 413:
                // The whole batch is refused and would be again: keeping it would stop every
                // later event. Nothing of this SDK's sends such a batch.
                events.withBackoff { $0.succeeded() }
                events.remove(Set(batch.map(\.id)))
                throw ServerConnection.rejection(response)
            case 429, 500...599:
                // From the answer, as fetches do (Retry-After counts from the response).
                let answered = configuration.clock.now()
                let retryAt = events.withBackoff {
                    $0.failed(response, policy: configuration.backoff, now: answered)
                }
                throw .serverUnavailable(status: response.status, retryAt: retryAt)
            default:
                // A revoked key, a wrong environment: the events wait for a fixed configuration.
                throw ServerConnection.rejection(response)
            }
        }
    }

    /// Logs the events the server refused one by one (they leave the queue: they would be
    /// refused again).
    private func logRefusals(_ response: TransportResponse, batch: [QueuedEvent]) {
        guard let answer = try? JSONValue.parse(Array(response.body)).objectValue,
            let rejected = answer["rejected"]?.arrayValue, !rejected.isEmpty
        else { return }
        let first = rejected.first?.objectValue
        configuration.logger.warning(
            "the server refused \(rejected.count) of \(batch.count) events; the first: \(first?["path"]?.stringValue ?? "?"): \(first?["message"]?.stringValue ?? "?")"
        )
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// What the server accepts in a tracked event, checked before it is queued.
enum TrackingRules {
    static func problem(name: String, value: Double?, properties: [String: String]) -> String? {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/")
        }
        guard !name.isEmpty, name.utf8.count <= 100, allowed else {
            return
                "the name must be 1-100 letters, digits, '_', '-', '.', ':' or '/' (as the experiment's metric names it)"
        }
        if let value, !value.isFinite || abs(value) > 1e12 {
            return "the value \(value) is not a finite number within ±10¹²"
        }
        if properties.count > 20 { return "\(properties.count) properties; at most 20" }
        if let long = properties.first(where: { $0.value.count > 256 }) {
            return "property \"\(long.key)\" has more than 256 characters"
        }
        return nil
    }
}
