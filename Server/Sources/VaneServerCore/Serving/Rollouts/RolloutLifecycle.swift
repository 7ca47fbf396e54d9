import NIOConcurrencyHelpers
package import VaneCore

/// The one way a rollout is created and changes state, for the API, the CLI through it, and the
/// guard (docs/ROLLOUTS.md). Every step that changes what clients get — the start, each advance,
/// the completion, a roll back — is a publish through ``TemplatePublisher``, whose transaction
/// also claims the rollout's row (``RolloutStore/claim(_:_:id:from:step:to:step:stepStart:now:)``),
/// starts or stops the step's experiment and records the decision: all commit together or not at
/// all. Pause, resume, stop and holds publish nothing.
package struct RolloutLifecycle: Sendable {
    package let publisher: TemplatePublisher
    package let rollouts: RolloutStore
    package let experiments: ExperimentLifecycle
    /// The time hold periods and decisions read: the system's, or a test's.
    package let clock: ServerClock

    package init(
        publisher: TemplatePublisher,
        rollouts: RolloutStore,
        experiments: ExperimentLifecycle,
        clock: ServerClock
    ) {
        self.publisher = publisher
        self.rollouts = rollouts
        self.experiments = experiments
        self.clock = clock
    }

    /// Who the version history and the audit log name for the guard's decisions about `id`.
    package static func guardActor(_ id: String) -> Actor {
        Actor(keyId: nil, name: "rollout \(id) (vane rollout guard)")
    }

    /// Reads a plan, checks it against the live template and stores it as a draft.
    /// - Throws: ``RolloutTemplateError`` (every problem of the plan, with its path), ``PublishError``
    ///   when the first step's template does not validate, ``StorageError`` as the store throws it.
    package func create(_ body: JSONObject, in environment: EnvironmentKey, actor: Actor) async throws -> Rollout {
        let live = try await publisher.liveTemplate(environment)
        let plan: RolloutPlan
        switch RolloutPlanReader.read(body, seed: RandomBytes.identifier(prefix: "rollout-")) {
        case .success(let read): plan = read
        case .failure(let error): throw RolloutTemplateError(issues: error.issues)
        }
        // The first step's template must publish: the new values fit their parameters' types.
        let first = try RolloutTemplate.applying(plan, percent: plan.steps[0], to: live.template)
        _ = try publisher.check(first)
        return try await rollouts.create(plan, in: environment, actor: actor, now: clock.nowMilliseconds())
    }

    /// Starts a draft at its first step.
    /// - Parameter authorization: What allows it under the change policy: direct while none is in
    ///   force, else an approved `rollout_start` change request (``ChangeRequestApplying``).
    package func start(
        _ environment: EnvironmentKey,
        id: String,
        actor: Actor,
        authorization: ChangeAuthorization = .direct("starting the rollout")
    ) async throws -> Rollout {
        let rollout = try await existing(environment, id: id)
        guard rollout.state == .draft else {
            throw StorageError.rolloutState(id: id, state: rollout.state.rawValue, action: "start")
        }
        return try await publishStep(
            rollout,
            to: 0,
            action: .start,
            reason: "started by \(actor.name)",
            figures: nil,
            actor: actor,
            authorization: authorization
        )
    }

    /// The guard's advance of a running rollout from the step it read to the next (the last
    /// completes it).
    @discardableResult
    package func advance(_ rollout: Rollout, assessment: RolloutAssessment) async throws -> Rollout {
        let next = rollout.step + 1
        return try await publishStep(
            rollout,
            to: next,
            action: next == rollout.plan.steps.count - 1 ? .complete : .advance,
            reason: assessment.reason,
            figures: assessment.json,
            actor: Self.guardActor(rollout.id),
            unchangedSince: rollout.updateTime
        )
    }

    /// Publishes the template without the rollout's values: everyone gets what they got before.
    /// The guard passes the step and update time it read, a person nil.
    @discardableResult
    package func rollBack(
        _ environment: EnvironmentKey,
        id: String,
        expectedStep: Int? = nil,
        unchangedSince updateTime: Int64? = nil,
        reason: String,
        figures: JSONObject?,
        actor: Actor
    ) async throws -> Rollout {
        let rollout = try await existing(environment, id: id)
        guard rollout.state == .running || rollout.state == .paused,
            expectedStep.map({ $0 == rollout.step }) ?? true
        else {
            throw StorageError.rolloutState(id: id, state: rollout.state.rawValue, action: "roll back")
        }
        let now = clock.nowMilliseconds()
        var template = RolloutTemplate.removing(id, from: try await publisher.liveTemplate(environment).template)
        template.version = TemplateVersion(description: "rollout \(id): rolled back")
        let decision = RolloutDecision(
            time: now,
            step: rollout.step,
            percent: rollout.percent,
            action: .rollBack,
            actor: actor.name,
            reason: reason,
            figures: figures
        )
        // Not validated again: today's rules must not stand between a regression and its undoing.
        return try await publish(
            try publisher.check(template, validating: false),
            rollout: rollout,
            to: .rolledBack,
            step: rollout.step,
            decision: decision,
            webhook: .rolloutRolledBack,
            actor: actor,
            unchangedSince: updateTime
        )
    }

    /// Pauses a running rollout: the current step stays as published, the guard decides nothing.
    package func pause(_ environment: EnvironmentKey, id: String, actor: Actor) async throws -> Rollout {
        try await change(
            environment,
            id: id,
            from: [.running],
            to: .paused,
            action: .pause,
            webhook: .rolloutPaused,
            actor: actor
        )
    }

    /// Resumes a paused rollout: the guard decides again, the step's hold time counting from its start.
    package func resume(_ environment: EnvironmentKey, id: String, actor: Actor) async throws -> Rollout {
        try await change(
            environment,
            id: id,
            from: [.paused],
            to: .running,
            action: .resume,
            webhook: .rolloutResumed,
            actor: actor
        )
    }

    /// Stops a rollout where it stands: the current share keeps the new value (the template is not
    /// touched), the guard no longer watches. ``rollBack(_:id:expectedStep:reason:figures:actor:)``
    /// returns everyone to the old value instead.
    package func stop(_ environment: EnvironmentKey, id: String, actor: Actor) async throws -> Rollout {
        try await change(
            environment,
            id: id,
            from: [.draft, .running, .paused],
            to: .stopped,
            action: .stop,
            webhook: .rolloutStopped,
            actor: actor
        )
    }

    /// The guard's hold: the decision and its webhook, once per step and kind; a regression under
    /// `onRegression: hold` pauses the rollout.
    @discardableResult
    package func hold(_ rollout: Rollout, assessment: RolloutAssessment, pausing: Bool) async throws -> Rollout {
        let decision = RolloutDecision(
            time: clock.nowMilliseconds(),
            step: rollout.step,
            percent: rollout.percent,
            action: .hold,
            actor: Self.guardActor(rollout.id).name,
            reason: assessment.reason,
            figures: assessment.json
        )
        return try await rollouts.change(
            rollout.environment,
            id: rollout.id,
            from: [.running],
            step: rollout.step,
            unchangedSince: rollout.updateTime,
            to: pausing ? .paused : .running,
            decision: decision,
            actor: Self.guardActor(rollout.id),
            webhook: .rolloutHeld
        )
    }

    private func existing(_ environment: EnvironmentKey, id: String) async throws -> Rollout {
        try await publisher.store.requireEnvironment(environment)
        guard let rollout = try await rollouts.rollout(environment, id: id) else {
            throw StorageError.rolloutNotFound(id)
        }
        return rollout
    }

    private func change(
        _ environment: EnvironmentKey,
        id: String,
        from states: Set<RolloutState>,
        to state: RolloutState,
        action: RolloutDecision.Action,
        webhook: WebhookEventType,
        actor: Actor
    ) async throws -> Rollout {
        let rollout = try await existing(environment, id: id)
        let decision = RolloutDecision(
            time: clock.nowMilliseconds(),
            step: rollout.step,
            percent: rollout.percent,
            action: action,
            actor: actor.name,
            reason: "\(action.rawValue) by \(actor.name)",
            figures: nil
        )
        let changed = try await rollouts.change(
            environment,
            id: id,
            from: states,
            step: nil,
            to: state,
            decision: decision,
            actor: actor,
            webhook: webhook
        )
        if state.isFinal { try await serveRunning(in: environment) }
        return changed
    }

    /// Serves the environment's running experiments (the step's) to fetch and events on this node
    /// at once; other nodes follow on their next version poll.
    private func serveRunning(in environment: EnvironmentKey) async throws {
        experiments.experiments.forgetRunning(environment)
        try await experiments.serveRunning(in: environment)
    }

    /// Publishes the rollout at step `step` (the start or an advance).
    private func publishStep(
        _ rollout: Rollout,
        to step: Int,
        action: RolloutDecision.Action,
        reason: String,
        figures: JSONObject?,
        actor: Actor,
        authorization: ChangeAuthorization? = nil,
        unchangedSince updateTime: Int64? = nil
    ) async throws -> Rollout {
        let plan = rollout.plan
        let percent = plan.steps[step]
        let live = try await publisher.liveTemplate(rollout.environment)
        var template = try RolloutTemplate.applying(plan, percent: percent, to: live.template)
        template.version = TemplateVersion(
            description:
                "rollout \(rollout.id): step \(step + 1) of \(plan.steps.count), \(RolloutPlan.percentText(percent)) %"
        )
        let decision = RolloutDecision(
            time: clock.nowMilliseconds(),
            step: step,
            percent: percent,
            action: action,
            actor: actor.name,
            reason: reason,
            figures: figures
        )
        let last = step == plan.steps.count - 1
        return try await publish(
            try publisher.check(template),
            rollout: rollout,
            to: last ? .completed : .running,
            step: step,
            decision: decision,
            webhook: action == .start ? .rolloutStarted : (last ? .rolloutCompleted : .rolloutAdvanced),
            expectedVersion: live.version,
            actor: actor,
            authorization: authorization,
            unchangedSince: updateTime
        )
    }

    /// The publish and, in its transaction, the claim, the step experiments and the decision.
    private func publish(
        _ checked: CheckedTemplate,
        rollout: Rollout,
        to state: RolloutState,
        step: Int,
        decision: RolloutDecision,
        webhook: WebhookEventType,
        expectedVersion: Int64? = nil,
        actor: Actor,
        authorization: ChangeAuthorization? = nil,
        unchangedSince updateTime: Int64? = nil
    ) async throws -> Rollout {
        let environment = rollout.environment
        let kind = publisher.store.engine.kind
        let now = decision.time
        let claimed = NIOLockedValueBox<Rollout?>(nil)
        try await publisher.publish(
            checked,
            to: environment,
            expectedVersion: expectedVersion,
            actor: actor,
            // The start: direct or an approved request; every later step: the started rollout.
            authorization: authorization ?? .rollout(rollout.id),
            change: WebhookChange(
                type: webhook,
                details: [
                    "rollout": .string(rollout.id), "step": .number(JSONNumber(step + 1)),
                    "percent": .number(JSONNumber(decision.percent)), "reason": .string(decision.reason),
                ]
            ),
            alongside: { database, version in
                var moved = try await RolloutStore.claim(
                    database,
                    environment,
                    id: rollout.id,
                    from: rollout.state,
                    step: rollout.step,
                    to: state,
                    step: step,
                    stepStart: now,
                    now: now,
                    unchangedSince: updateTime
                )
                moved.plan = rollout.plan
                if state == .running {
                    try await RolloutStore.startStepExperiment(
                        database,
                        environment,
                        plan: rollout.plan,
                        step: step,
                        now: now,
                        version: version,
                        actor: actor
                    )
                } else {
                    try await RolloutStore.stopStepExperiment(database, environment, rollout: rollout, now: now)
                }
                try await RolloutStore.record(
                    database,
                    environment,
                    id: rollout.id,
                    decision,
                    actor: actor,
                    kind: kind,
                    version: version,
                    webhook: nil
                )
                claimed.withLockedValue { $0 = moved }
            },
            kind: authorization == nil ? nil : "rollout_start"
        )
        try await serveRunning(in: environment)
        guard let moved = claimed.withLockedValue({ $0 }) else {
            throw StorageError.rolloutState(
                id: rollout.id,
                state: rollout.state.rawValue,
                action: decision.action.rawValue
            )
        }
        return moved
    }
}
