import Foundation
import Hummingbird
import Logging
import VaneAuthoring
import VaneCore
import VaneServerCore

/// An environment's change policy and change requests (docs/GOVERNANCE.md): reading needs what
/// reading history needs; opening, editing, reviewing and applying need what publishing the
/// environment needs; setting the policy needs an admin. Approvals and the policy itself are
/// checked again in the transaction that applies a request.
struct ChangeRequestRoutes {
    let applying: ChangeRequestApplying
    let experiments: ExperimentStore
    let drafts: DraftStore
    /// Wakes this node's scheduler when a request is scheduled, so it need not wait for its poll.
    let scheduleWake: WakeSignal
    /// The time a scheduled time is checked against.
    let clock: ServerClock

    var requests: ChangeRequestStore { applying.requests }
    var publisher: TemplatePublisher { applying.publisher }

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.get("change-policy", use: getPolicy)
        group.put("change-policy", use: putPolicy)
        group.get("change-requests", use: list)
        group.post("change-requests", use: create)
        group.get("change-requests/:request", use: get)
        group.patch("change-requests/:request", use: edit)
        group.post("change-requests/:request/cancel", use: cancel)
        group.post("change-requests/:request/approve", use: approve)
        group.post("change-requests/:request/reject", use: reject)
        group.post("change-requests/:request/comments", use: comment)
        group.post("change-requests/:request/apply", use: apply)
        group.post("change-requests/:request/schedule", use: schedule)
        group.delete("change-requests/:request/schedule", use: unschedule)
    }

    @Sendable func getPolicy(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await publisher.store.requireEnvironment(environment)
        let (policy, effective) = try await requests.policy(environment)
        return JSONResponse.make(policyJSON(policy, effectiveVersion: effective))
    }

    @Sendable func putPolicy(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.administer)
        try await publisher.store.requireEnvironment(environment)
        let body = try await RequestReading.object(request)
        let policy = try Self.read { () throws(ChangeInputError) in try ChangePolicy.read(body) }
        let effective = try await requests.setPolicy(
            policy,
            in: environment,
            authorization: .direct("changing the change policy"),
            actor: principal.actor
        )
        return JSONResponse.make(policyJSON(policy, effectiveVersion: effective))
    }

    @Sendable func list(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await publisher.store.requireEnvironment(environment)
        var state: ChangeRequestState?
        if let text = request.uri.queryParameters.get("state") {
            guard let known = ChangeRequestState(rawValue: String(text)) else {
                throw APIError.invalidArgument(
                    "query parameter state must be one of "
                        + ChangeRequestState.allCases.map(\.rawValue).joined(separator: ", ")
                        + ", found \"\(text.prefix(64))\""
                )
            }
            state = known
        }
        let policy = try await requests.policy(environment).policy
        let found = try await requests.requests(environment, state: state)
        return JSONResponse.make(["changeRequests": .array(found.map { .object($0.json(policy: policy)) })])
    }

    @Sendable func create(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (principal, environment) = try await publishable(context)
        let body = try await RequestReading.object(request, limit: ServerLimits.maximumTemplateBytes)
        let title = try RequestReading.string(body, "title")
        guard title.count <= 200 else { throw APIError.invalidArgument("\"title\" has at most 200 characters") }
        let description = try RequestReading.optionalString(body, "description") ?? ""
        let change = try Self.read { () throws(ChangeInputError) in try ProposedChange.read(body["change"]) }
        try await check(change, in: environment)
        let created = try await requests.create(
            change,
            in: environment,
            title: title,
            description: description,
            draft: body["draft"]?.boolValue ?? false,
            author: principal.changeActor
        )
        return JSONResponse.make(try await detail(created), status: .created)
    }

    @Sendable func get(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await publisher.store.requireEnvironment(environment)
        return JSONResponse.make(try await detail(try await requests.request(environment, id: id(context))))
    }

    @Sendable func edit(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (principal, environment) = try await publishable(context)
        let body = try await RequestReading.object(request, limit: ServerLimits.maximumTemplateBytes)
        var change: ProposedChange?
        if body["change"] != nil {
            let read = try Self.read { () throws(ChangeInputError) in try ProposedChange.read(body["change"]) }
            try await check(read, in: environment)
            change = read
        }
        let edited = try await requests.edit(
            environment,
            id: try id(context),
            ChangeRequestStore.Edit(
                change: change,
                title: try RequestReading.optionalString(body, "title"),
                description: try RequestReading.optionalString(body, "description"),
                rebase: body["rebase"]?.boolValue ?? false,
                submit: body["submit"]?.boolValue ?? false
            ),
            by: principal.changeActor
        )
        return JSONResponse.make(try await detail(edited))
    }

    @Sendable func cancel(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let cancelled = try await requests.cancel(environment, id: try id(context), by: principal.actor)
        return JSONResponse.make(try await detail(cancelled))
    }

    @Sendable func approve(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await review(request, context: context, decision: .approve)
    }

    @Sendable func reject(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await review(request, context: context, decision: .reject)
    }

    @Sendable func comment(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await review(request, context: context, decision: .comment)
    }

    func review(
        _ request: Request,
        context: VaneRequestContext,
        decision: ChangeReview.Decision
    ) async throws
        -> Response
    {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let body = try await RequestReading.object(request)
        let comment =
            decision == .comment
            ? try RequestReading.string(body, "comment") : try RequestReading.optionalString(body, "comment") ?? ""
        guard comment.count <= 10_000 else {
            throw APIError.invalidArgument("\"comment\" has at most 10000 characters")
        }
        let seen = try RequestReading.optionalString(body, "contentHash")
        if decision != .comment && seen == nil {
            throw APIError.invalidArgument(
                "\"contentHash\" is required: the contentHash of the revision you reviewed (GET the change request)"
            )
        }
        let reviewed = try await requests.review(
            environment,
            id: try id(context),
            decision: decision,
            comment: comment,
            seenHash: seen,
            by: principal.changeActor
        )
        return JSONResponse.make(try await detail(reviewed))
    }

    @Sendable func apply(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (principal, environment) = try await publishable(context)
        let body = try await RequestReading.object(request)
        let breakGlass = try RequestReading.optionalString(body, "breakGlass")
        if let breakGlass, breakGlass.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw APIError.invalidArgument("\"breakGlass\" is the reason, for the audit log; say why")
        }
        let applied = try await applying.apply(
            environment,
            id: try id(context),
            by: principal.changeActor,
            breakGlass: breakGlass
        )
        if breakGlass != nil {
            context.logger.warning(
                "break-glass apply",
                metadata: ["environment": "\(environment)", "changeRequest": "\(applied.id)", "by": "\(principal.id)"]
            )
        }
        return JSONResponse.make(try await detail(applied))
    }

    /// `POST …/schedule {"applyTime": RFC 3339}`: an approved request applies at that time.
    /// Needs what applying it needs.
    @Sendable func schedule(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (principal, environment) = try await publishable(context)
        let body = try await RequestReading.object(request)
        let text = try RequestReading.string(body, "applyTime")
        guard let applyTime = Clock.milliseconds(rfc3339: text) else {
            throw APIError.invalidArgument(
                "applyTime: expected an RFC 3339 time with a time zone, such as 2026-12-01T09:00:00Z, "
                    + "found \"\(text.prefix(64))\""
            )
        }
        if let problem = ChangeRequest.applyTimeProblem(applyTime, now: clock.nowMilliseconds()) {
            throw APIError.invalidArgument(problem)
        }
        let scheduled = try await requests.schedule(
            environment,
            id: try id(context),
            at: applyTime,
            by: principal.changeActor
        )
        scheduleWake.signal()
        return JSONResponse.make(try await detail(scheduled))
    }

    /// `DELETE …/schedule`: the request is approved again, without a time.
    @Sendable func unschedule(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (principal, environment) = try await publishable(context)
        let unscheduled = try await requests.unschedule(environment, id: try id(context), by: principal.changeActor)
        return JSONResponse.make(try await detail(unscheduled))
    }

    // MARK: - Helpers

    /// The caller and the environment in the path, for a request that changes what the
    /// environment's clients may get: the caller may publish there, and the environment exists.
    func publishable(_ context: VaneRequestContext) async throws -> (Principal, EnvironmentKey) {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        try await publisher.store.requireEnvironment(environment)
        return (principal, environment)
    }

    func id(_ context: VaneRequestContext) throws(APIError) -> String {
        guard let id = context.parameters.get("request"), !id.isEmpty, id.count <= 64 else {
            throw APIError.notFound("no such change request")
        }
        return id
    }

    /// A change request can be opened only for something that can apply: a valid template, an
    /// earlier version, an existing experiment.
    func check(_ change: ProposedChange, in environment: EnvironmentKey) async throws {
        switch change {
        case .template(let template):
            _ = try publisher.check(template)
        case .rollback(let number):
            let live = try await publisher.store.currentVersionNumber(
                projectId: environment.projectId,
                environmentId: environment.environmentId
            )
            guard number < live else {
                throw APIError.invalidArgument(
                    "change.versionNumber: can only roll back to a version before the live one (\(live)), not \(number)"
                )
            }
        case .experimentStart(let key), .experimentStop(let key):
            guard try await experiments.experiment(environment, key: key) != nil else {
                throw StorageError.experimentNotFound(key)
            }
        case .rolloutStart(let id):
            guard let rollout = try await applying.rollouts.rollouts.rollout(environment, id: id) else {
                throw StorageError.rolloutNotFound(id)
            }
            guard rollout.state == .draft else {
                throw StorageError.rolloutState(id: id, state: rollout.state.rawValue, action: "start")
            }
        case .policy:
            break
        }
    }

    /// The request with what reviewers see: the change as it applies on the live version now,
    /// its diff from the live template and how many sampled users get another value.
    func detail(_ request: ChangeRequest) async throws -> JSONValue {
        let policy = try await requests.policy(request.environment).policy
        var object = request.json(policy: policy)
        var preview: JSONObject = [:]
        let live = try await publisher.liveTemplate(request.environment)
        preview["liveVersion"] = .string(String(live.version))
        if !request.state.isFinal {
            switch try await applying.outcome(request) {
            case .noTemplate:
                preview["applies"] = .string("no_template")
            case .stale(let reason):
                preview["applies"] = .string("stale")
                preview["reason"] = .string(reason)
            case .publishes(let template, let onto):
                preview["applies"] = .string(onto == request.baseVersion ? "on_base" : "rebased")
                preview["diff"] = TemplateDiff(from: live.template, to: template).json()
                let saved = try await drafts.savedContexts(projectId: request.environment.projectId)
                let result = ValueChangeSample.estimate(
                    from: live.template,
                    to: template,
                    savedContexts: saved,
                    at: Date()
                )
                if case .counts = result { preview["impact"] = result.keysJSON }
            }
            object["preview"] = .object(preview)
        }
        return .object(object)
    }

    func policyJSON(_ policy: ChangePolicy, effectiveVersion: Int64?) -> JSONValue {
        var object = policy.json()
        if let effectiveVersion { object["effectiveVersion"] = .string(String(effectiveVersion)) }
        return .object(object)
    }

    /// Runs a reader and answers its error as a 400 naming the member.
    static func read<T>(_ body: () throws(ChangeInputError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw APIError.invalidArgument(
                error.description,
                details: [ValidationIssue(.error, at: JSONPath.root, rule: "change-request", error.description)]
            )
        }
    }
}
