import Hummingbird
import VaneCore

/// `POST …/events`: the exposures and metric events apps send for experiments (any key that may
/// fetch the environment). Bad events are reported one by one and the good ones kept; an event
/// whose id is already stored is counted as a duplicate and changes nothing.
struct EventRoutes {
    let store: ConfigStore
    let cache: ServingCache
    let experiments: ExperimentStore
    let ingestor: EventIngestor
    let limiter: RateLimiter

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("events", use: ingest)
    }

    /// The rate limiter's per-client bucket is keyed by a body digest; batches all differ, so
    /// they share this one, and the client scope becomes the address's.
    static let limiterDigest = Digest128(hashing: Array("experiment-events".utf8))

    @Sendable func ingest(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        let principal = try context.requirePrincipal()
        try principal.require(.fetch(environment))
        if let refusal = limiter.acquire(keyId: principal.id, address: context.clientAddress, body: Self.limiterDigest)
        {
            throw APIError.rateLimited(refusal)
        }
        // Environments are never deleted: one with a template being served exists.
        if cache.template(for: environment) == nil { try await store.requireEnvironment(environment) }
        let body = try await RequestReading.object(request, limit: ServerLimits.maximumEventBatchBytes)
        let now = Clock.nowMilliseconds()
        let batch: (events: [(index: Int, event: ExperimentEvent)], rejected: [ExperimentEventReader.Rejection])
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
        let runningList = try await experiments.runningExperiments(environment)
        let running = Dictionary(runningList.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, event) in batch.events {
            if let issue = ExperimentEventReader.exposureProblem(event, index: index, running: running, in: environment)
            {
                rejected.append(ExperimentEventReader.Rejection(index: index, id: event.id, issue: issue))
            } else {
                kept.append(event)
            }
        }
        let stored = try await ingestor.ingest(kept, in: environment, running: runningList, receivedAt: now)
        rejected.sort { $0.index < $1.index }
        return JSONResponse.make([
            "accepted": .number(JSONNumber(stored.count)),
            "duplicates": .number(JSONNumber(kept.count - stored.count)),
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
}
