import Hummingbird
import VaneCore
import VaneServerCore

/// `POST …/events`: the exposures and metric events apps send for experiments (any key that may
/// fetch the environment). Bad events are reported one by one and the good ones kept; an event
/// whose id is already stored, or appears earlier in the batch, is counted as a duplicate and
/// changes nothing; a metric event no running experiment reads is counted as ignored and not
/// stored. Every event sent is counted once: accepted + duplicates + ignored + rejected.
struct EventRoutes {
    let store: ConfigStore
    let cache: ServingCache
    let experiments: ExperimentStore
    let ingestor: EventIngestor
    let events: ExperimentEventStore
    /// Events' own budget per address and per key, apart from fetch's: a relay forwarding its
    /// users' events sends every batch from one address.
    let limiter: RateLimiter
    let quota: EventQuota
    /// Each batch's receipt time, which orders exports and counts retention.
    let clock: ServerClock
    /// Wakes this node's rollout guard when events for a rollout's step are stored.
    let rolloutWake: WakeSignal

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("events", use: ingest)
    }

    @Sendable func ingest(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        let principal = try context.requirePrincipal()
        try principal.require(.fetch(environment))
        // No per-client scope: batches all differ, so the address and the key are what count.
        if let refusal = limiter.acquire(keyId: principal.id, address: context.clientAddress, body: .zero) {
            throw APIError.rateLimited(refusal)
        }
        // Environments are never deleted: one with a template being served exists.
        if cache.template(for: environment) == nil { try await store.requireEnvironment(environment) }
        let body = try await RequestReading.object(request, limit: ServerLimits.maximumEventBatchBytes)
        let now = clock.nowMilliseconds()
        let batch: ExperimentEventReader.Batch
        switch ExperimentEventReader.read(body, now: now) {
        case .success(let read): batch = read
        case .failure(let error):
            throw APIError.invalidArgument(
                error.issues.first?.message ?? "not a batch of events",
                details: error.issues
            )
        }
        var rejected = batch.rejected
        var kept: [ExperimentEvent] = []
        var ignored = 0
        let runningList = try await experiments.runningExperiments(environment)
        let running = Dictionary(runningList.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let names = ExperimentAggregation.eventNames(runningList)
        for (index, event) in batch.events {
            if let issue = ExperimentEventReader.exposureProblem(event, index: index, running: running, in: environment)
            {
                rejected.append(ExperimentEventReader.Rejection(index: index, id: event.id, issue: issue))
            } else if case .metric(let name, _, _) = event.kind, !names.contains(name) {
                // It would count for no experiment: storing it would only fill the database.
                ignored += 1
            } else {
                kept.append(event)
            }
        }
        let reservation: EventQuota.Reservation
        var storedBefore = 0
        switch quota.reserve(kept.count, for: environment, now: now) {
        case .success(let reserved): reservation = reserved
        case .failure:
            // Which events are duplicates is known once they are stored. At the quota's edge the
            // batch's stored ids are read first, so a retried batch is not refused for them.
            let known = try await events.storedIds(kept.map(\.id), in: environment)
            storedBefore = kept.count
            kept.removeAll { known.contains($0.id) }
            storedBefore -= kept.count
            switch quota.reserve(kept.count, for: environment, now: now) {
            case .success(let reserved): reservation = reserved
            case .failure(let refusal): throw Self.quotaExhausted(refusal, environment: environment, batch: kept.count)
            }
        }
        let stored: Int
        do {
            stored = try await ingestor.ingest(kept, in: environment, running: runningList, receivedAt: now)
        } catch {
            quota.release(kept.count, of: reservation)
            throw error
        }
        quota.release(kept.count - stored, of: reservation)
        if stored > 0, runningList.contains(where: { $0.key.hasPrefix(RolloutPlan.experimentKeyPrefix) }) {
            rolloutWake.signal()
        }
        rejected.sort { $0.index < $1.index }
        return JSONResponse.make([
            "accepted": .number(JSONNumber(stored)),
            "duplicates": .number(JSONNumber(batch.duplicates + storedBefore + kept.count - stored)),
            "ignored": .number(JSONNumber(ignored)),
            "rejected": .array(
                rejected.map { rejection in
                    var object: JSONObject = [
                        "index": .number(JSONNumber(rejection.index)),
                        "path": .string(rejection.issue.path.description),
                        "rule": .string(rejection.issue.rule),
                        "message": .string(rejection.issue.message),
                    ]
                    if let id = rejection.id { object["id"] = .string(id) }
                    return .object(object)
                }
            ),
        ])
    }

    /// 429 RESOURCE_EXHAUSTED until the next UTC day, naming the quota and how to raise it.
    static func quotaExhausted(_ refusal: EventQuota.Refusal, environment: EnvironmentKey, batch: Int) -> APIError {
        APIError(
            .tooManyRequests,
            "RESOURCE_EXHAUSTED",
            "\(environment) may store \(refusal.quota) events a day (UTC) on this server and has \(refusal.remaining) "
                + "left today, fewer than the \(batch) new events of this batch; nothing was stored. Send them again "
                + "after 00:00 UTC (in \(refusal.retryAfterSeconds) s), or raise the quota with --event-quota-per-day "
                + "(VANE_EVENT_QUOTA_PER_DAY)",
            headers: [.retryAfter: String(refusal.retryAfterSeconds)]
        )
    }
}
