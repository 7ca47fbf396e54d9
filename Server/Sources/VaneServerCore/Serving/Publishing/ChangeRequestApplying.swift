import Foundation
import VaneAuthoring
package import VaneCore

/// The one way a change request applies — through the same ``TemplatePublisher``,
/// ``ExperimentLifecycle`` and ``ChangeRequestStore/setPolicy(_:in:authorization:actor:)`` every
/// other path uses, with the request as the authorization the write's transaction checks — and
/// what its reviewers see: the change as it would apply now on the live version.
package struct ChangeRequestApplying: Sendable {
    package let publisher: TemplatePublisher
    package let lifecycle: ExperimentLifecycle
    package let requests: ChangeRequestStore
    package let rollouts: RolloutLifecycle

    /// - Parameter clock: The time a rollout started by a request records.
    package init(publisher: TemplatePublisher, lifecycle: ExperimentLifecycle, clock: ServerClock = .system) {
        self.publisher = publisher
        self.lifecycle = lifecycle
        self.requests = ChangeRequestStore(engine: publisher.store.engine)
        self.rollouts = RolloutLifecycle(
            publisher: publisher,
            rollouts: RolloutStore(engine: publisher.store.engine),
            experiments: lifecycle,
            clock: clock
        )
    }

    /// What a template or rollback request would publish on the live version.
    package enum Outcome: Sendable {
        /// The template that would be published, on `onto` (the live version).
        case publishes(ConfigTemplate, onto: Int64)
        /// The live version moved and the change does not rebase; why.
        case stale(String)
        /// The request changes no template (an experiment or policy change).
        case noTemplate
    }

    /// The change as it would apply now: on its base, or rebased onto the live version by
    /// ``TemplateRebasing`` (the per-field merge the API's rebase and the console's drafts use).
    package func outcome(_ request: ChangeRequest) async throws -> Outcome {
        let live = try await publisher.liveTemplate(request.environment)
        switch request.change {
        case .template(let proposed):
            if live.version == request.baseVersion { return .publishes(proposed, onto: live.version) }
            let base = try await template(request.environment, number: request.baseVersion)
            switch try TemplateRebasing.rebase(proposed, base: base, live: live.template, choices: [:]) {
            case .merged(let merged, _):
                return .publishes(merged, onto: live.version)
            case .conflicts(let conflicts):
                let names = conflicts.prefix(5).map { TemplateRebasing.name(of: $0.subject) }.joined(separator: ", ")
                return .stale(
                    "version \(live.version) changed what it changes since version \(request.baseVersion) (\(names))"
                )
            }
        case .rollback(let number):
            guard live.version == request.baseVersion else {
                return .stale(
                    "it was approved on version \(request.baseVersion), and version \(live.version) is live; "
                        + "a rollback does not rebase"
                )
            }
            return .publishes(try await template(request.environment, number: number), onto: live.version)
        case .experimentStart, .experimentStop, .policy, .rolloutStart:
            return .noTemplate
        }
    }

    /// Applies a request: approved, or by break-glass when `breakGlass` gives the reason. A
    /// request whose live version moved and that does not rebase is suspended.
    /// - Throws: ``ChangeRefusal`` (also from the write's transaction), ``PublishError`` and
    ///   the experiment and storage errors as the paths throw them.
    package func apply(
        _ environment: EnvironmentKey,
        id: String,
        by actor: ChangeActor,
        breakGlass: String?
    ) async throws -> ChangeRequest {
        try await apply(
            environment,
            id: id,
            authorization: breakGlass.map { .breakGlass(id, reason: $0, by: actor) } ?? .request(id),
            actor: actor.actor,
            scheduledFor: nil
        )
    }

    /// Applies a request at its scheduled time, for ``ChangeRequestScheduler``: the write's
    /// transaction claims it (it must still be scheduled), so it applies once on one node. A
    /// request whose live version moved and that does not rebase is suspended, and its author
    /// told by the `change_request.suspended` webhook.
    package func applyScheduled(
        _ scheduled: ChangeRequestStore.ScheduledChange,
        by actor: Actor
    ) async throws
        -> ChangeRequest
    {
        try await apply(
            scheduled.environment,
            id: scheduled.id,
            authorization: .scheduled(scheduled.id),
            actor: actor,
            scheduledFor: scheduled.applyTime
        )
    }

    private func apply(
        _ environment: EnvironmentKey,
        id: String,
        authorization: ChangeAuthorization,
        actor: Actor,
        scheduledFor: Int64?
    ) async throws -> ChangeRequest {
        let request = try await requests.request(environment, id: id)
        guard !request.state.isFinal else {
            throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "apply")
        }
        if let scheduledFor, request.state != .scheduled || request.applyTime != scheduledFor {
            throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "apply as scheduled")
        }
        do {
            switch request.change {
            case .template, .rollback:
                switch try await outcome(request) {
                case .stale(let reason):
                    if case .breakGlass = authorization {
                        throw ChangeRefusal.state(id: id, state: "stale (\(reason))", action: "apply by break-glass")
                    }
                    throw ChangeRefusal.suspended(id: id, reason: reason)
                case .noTemplate: break
                case .publishes(var template, let onto):
                    template.version = TemplateVersion(description: String("\(request.title) (\(id))".prefix(500)))
                    if case .rollback(let number) = request.change {
                        try await publisher.rollback(
                            environment,
                            to: number,
                            expectedVersion: onto,
                            actor: actor,
                            authorization: authorization
                        )
                    } else {
                        try await publisher.publish(
                            try publisher.check(template),
                            to: environment,
                            expectedVersion: onto,
                            actor: actor,
                            authorization: authorization
                        )
                    }
                }
            case .experimentStart(let key):
                _ = try await lifecycle.start(environment, key: key, actor: actor, authorization: authorization)
            case .experimentStop(let key):
                _ = try await lifecycle.stop(environment, key: key, actor: actor, authorization: authorization)
            case .policy(let policy):
                _ = try await requests.setPolicy(policy, in: environment, authorization: authorization, actor: actor)
            case .rolloutStart(let id):
                _ = try await rollouts.start(environment, id: id, actor: actor, authorization: authorization)
            }
        } catch let error as PublishError {
            if case .changeRefused(let refusal) = error {
                try await suspendIfStale(refusal, environment, actor, scheduledFor: scheduledFor)
            }
            throw error
        } catch let refusal as ChangeRefusal {
            try await suspendIfStale(refusal, environment, actor, scheduledFor: scheduledFor)
            throw refusal
        }
        return try await requests.request(environment, id: id)
    }

    /// A stale request is suspended in its own transaction (the refused write rolled back).
    private func suspendIfStale(
        _ refusal: ChangeRefusal,
        _ environment: EnvironmentKey,
        _ actor: Actor,
        scheduledFor: Int64?
    )
        async throws
    {
        guard case .suspended(let id, let reason) = refusal else { return }
        try await requests.suspend(environment, id: id, reason: reason, by: actor, scheduledFor: scheduledFor)
    }

    private func template(_ environment: EnvironmentKey, number: Int64) async throws -> ConfigTemplate {
        if number == 0 { return ConfigTemplate() }
        guard
            let version = try await publisher.store.version(
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                number: number
            )
        else { throw PublishError.storage(.versionNotFound(number)) }
        return version.template
    }
}
