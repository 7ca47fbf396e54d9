import Hummingbird
import VaneCore
import VaneServerCore

/// An environment's experiments: create, list, read, start and stop (docs/EXPERIMENTS.md).
///
/// Reading needs what reading history needs (an admin key or any person); changing needs what
/// publishing the environment needs (an admin key, an admin, or an editor granted the
/// environment). Every change is audited.
struct ExperimentRoutes {
    let store: ConfigStore
    let experiments: ExperimentStore
    let lifecycle: ExperimentLifecycle
    let events: ExperimentEventStore

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("experiments", use: create)
        group.get("experiments", use: list)
        group.get("experiments/:experiment", use: get)
        group.get("experiments/:experiment/results", use: results)
        group.get("experiments/:experiment/events", use: export)
        group.post("experiments/:experiment/start", use: start)
        group.post("experiments/:experiment/stop", use: stop)
    }

    @Sendable func create(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        try await store.requireEnvironment(environment)
        let body = try await RequestReading.object(request)
        let experiment: Experiment
        do {
            experiment = try await lifecycle.create(body, in: environment, actor: principal.actor)
        } catch let refusal as ExperimentDefinitionRefusal {
            throw APIError.invalidArgument(refusal.description, details: refusal.issues)
        }
        return JSONResponse.make(ExperimentJSON.experiment(experiment), status: .created)
    }

    @Sendable func list(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await store.requireEnvironment(environment)
        var status: ExperimentStatus?
        if let text = request.uri.queryParameters.get("status") {
            guard let known = ExperimentStatus(rawValue: String(text)) else {
                throw APIError.invalidArgument(
                    "query parameter status must be draft, running or stopped, found \"\(text.prefix(64))\""
                )
            }
            status = known
        }
        let found = try await experiments.experiments(environment, status: status)
        return JSONResponse.make(["experiments": .array(found.map(ExperimentJSON.experiment))])
    }

    @Sendable func get(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await store.requireEnvironment(environment)
        let key = context.parameters.get("experiment") ?? ""
        guard let experiment = try await experiments.experiment(environment, key: key) else {
            throw StorageError.experimentNotFound(key)
        }
        return JSONResponse.make(ExperimentJSON.experiment(experiment))
    }

    /// The health checks and statistics, from the sums and running readings kept as events arrive.
    ///
    /// The API takes API keys; people read results in the console. A request that carries only
    /// the console's session cookie is told where that is.
    @Sendable func results(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        if context.principal == nil, request.cookies[SessionToken.cookieName] != nil {
            let key = context.parameters.get("experiment") ?? ""
            throw APIError.unauthenticated(
                "the API takes API keys, not console sessions: send Authorization: Bearer <admin key>; "
                    + "people signed in to the console read results on the experiment's page, "
                    + "/projects/\(environment.projectId)/environments/\(environment.environmentId)/experiments/\(key.prefix(63))"
            )
        }
        try context.requirePrincipal().require(.readHistory(environment))
        try await store.requireEnvironment(environment)
        let key = context.parameters.get("experiment") ?? ""
        guard let (experiment, stored) = try await experiments.experimentWithTally(environment, key: key) else {
            throw StorageError.experimentNotFound(key)
        }
        let report = ExperimentReport(experiment, tally: stored.tally, history: stored.history)
        return JSONResponse.make(.object(ExperimentResultsJSON.results(report)))
    }

    /// The experiment's raw events as NDJSON in the order received, written a page at a time so an
    /// export of millions of events holds one page in memory.
    @Sendable func export(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await store.requireEnvironment(environment)
        var bounds: [String: Int64] = [:]
        for name in ["since", "until"] {
            guard let text = request.uri.queryParameters.get(name) else { continue }
            guard let time = Clock.milliseconds(rfc3339: String(text)) else {
                throw APIError.invalidArgument(
                    "query parameter \(name) must be an RFC 3339 time such as 2026-11-01T00:00:00Z, found \"\(text.prefix(64))\""
                )
            }
            bounds[name] = time
        }
        let key = context.parameters.get("experiment") ?? ""
        guard let experiment = try await experiments.experiment(environment, key: key) else {
            throw StorageError.experimentNotFound(key)
        }
        let (since, until) = (bounds["since"], bounds["until"])
        let body = ResponseBody { [events] writer in
            var cursor: ExperimentEventStore.ExportCursor?
            while true {
                let page = try await events.exportPage(
                    experiment,
                    since: since,
                    until: until,
                    after: cursor,
                    limit: Self.exportPageSize
                )
                guard let last = page.last else { break }
                var text = ""
                for stored in page { text += JSONValue.object(stored.json).serialized(.compact) + "\n" }
                try await writer.write(ByteBuffer(string: text))
                if page.count < Self.exportPageSize { break }
                cursor = .init(receiveTime: last.receiveTime, id: last.event.id)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: body)
    }

    static let exportPageSize = 1_000

    @Sendable func start(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let key = context.parameters.get("experiment") ?? ""
        let started = try await lifecycle.start(environment, key: key, actor: principal.actor)
        return JSONResponse.make(ExperimentJSON.experiment(started))
    }

    @Sendable func stop(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let key = context.parameters.get("experiment") ?? ""
        return JSONResponse.make(
            ExperimentJSON.experiment(try await lifecycle.stop(environment, key: key, actor: principal.actor))
        )
    }
}
