import Hummingbird
import VaneCore
import VaneServerCore

/// An environment's rollouts: create, list, read with decisions, start, pause, resume, stop and
/// roll back (docs/ROLLOUTS.md).
///
/// Reading needs what reading history needs (an admin key or any person); every change needs
/// what publishing the environment needs (an admin key, an admin, or an editor granted the
/// environment), and is audited.
struct RolloutRoutes {
    let lifecycle: RolloutLifecycle

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("rollouts", use: create)
        group.get("rollouts", use: list)
        group.get("rollouts/:rollout", use: get)
        group.post("rollouts/:rollout/start", use: start)
        group.post("rollouts/:rollout/pause", use: pause)
        group.post("rollouts/:rollout/resume", use: resume)
        group.post("rollouts/:rollout/stop", use: stop)
        group.post("rollouts/:rollout/rollback", use: rollBack)
    }

    @Sendable func create(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let body = try await RequestReading.object(request)
        do {
            let rollout = try await lifecycle.create(body, in: environment, actor: principal.actor)
            return JSONResponse.make(RolloutJSON.rollout(rollout, decisions: []), status: .created)
        } catch let error as RolloutTemplateError {
            throw APIError.invalidArgument(error.description, details: error.issues)
        } catch PublishError.invalid(let issues) {
            let errors = issues.filter { $0.severity == .error }
            throw APIError.invalidArgument(
                "the rollout's values do not fit the live template: "
                    + errors.prefix(3).map { "\($0.path): \($0.message)" }.joined(separator: "; "),
                details: errors
            )
        }
    }

    @Sendable func list(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await lifecycle.publisher.store.requireEnvironment(environment)
        let found = try await lifecycle.rollouts.rollouts(environment)
        return JSONResponse.make(["rollouts": .array(found.map { RolloutJSON.rollout($0) })])
    }

    @Sendable func get(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readHistory(environment))
        try await lifecycle.publisher.store.requireEnvironment(environment)
        let id = context.parameters.get("rollout") ?? ""
        guard let rollout = try await lifecycle.rollouts.rollout(environment, id: id) else {
            throw StorageError.rolloutNotFound(id)
        }
        let decisions = try await lifecycle.rollouts.decisions(environment, id: id)
        return JSONResponse.make(RolloutJSON.rollout(rollout, decisions: decisions))
    }

    @Sendable func start(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await change(context) { environment, id, actor in
            do {
                return try await lifecycle.start(environment, id: id, actor: actor)
            } catch let error as RolloutTemplateError {
                // The live template changed since the rollout was created.
                throw APIError.failedPrecondition(error.description)
            }
        }
    }

    @Sendable func pause(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await change(context) { try await lifecycle.pause($0, id: $1, actor: $2) }
    }

    @Sendable func resume(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await change(context) { try await lifecycle.resume($0, id: $1, actor: $2) }
    }

    @Sendable func stop(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await change(context) { try await lifecycle.stop($0, id: $1, actor: $2) }
    }

    @Sendable func rollBack(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await change(context) { environment, id, actor in
            try await lifecycle.rollBack(
                environment,
                id: id,
                reason: "rolled back by \(actor.name)",
                figures: nil,
                actor: actor
            )
        }
    }

    /// The prologue every change shares: who may, which rollout; the answer is the rollout.
    private func change(
        _ context: VaneRequestContext,
        _ body: (EnvironmentKey, String, Actor) async throws -> Rollout
    ) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let id = context.parameters.get("rollout") ?? ""
        let rollout = try await body(environment, id, principal.actor)
        return JSONResponse.make(RolloutJSON.rollout(rollout))
    }
}
