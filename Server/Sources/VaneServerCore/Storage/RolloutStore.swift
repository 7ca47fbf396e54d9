package import SQLKit
import VaneCore

/// Rollouts, their decisions and their step experiments, over SQLite and PostgreSQL.
///
/// A rollout's state and step change only through ``claim(_:_:id:from:step:to:step:stepStart:now:)``,
/// a compare-and-set on both inside the caller's transaction — the publish of the step, or the
/// hold or pause that goes with no publish — after the environment's lock. Two nodes that decide
/// the same step queue on that lock; the second finds the row moved on and its whole transaction,
/// publish included, is undone. So each step is decided once.
package final class RolloutStore: Sendable {
    package let engine: DatabaseEngine

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// A stored plan that no longer reads.
    package struct UnreadablePlan: Error, CustomStringConvertible {
        package var id: String
        package var problems: String
        package var description: String {
            "the stored plan of rollout \"\(id)\" cannot be read (\(problems)); "
                + "it was written by another version of vane or changed in the database"
        }
    }

    /// Stores a new rollout as a draft.
    /// - Throws: ``StorageError/environmentNotFound(project:environment:)``, ``StorageError/rolloutExists(_:)``.
    package func create(
        _ plan: RolloutPlan,
        in environment: EnvironmentKey,
        actor: Actor,
        now: Int64
    ) async throws
        -> Rollout
    {
        let rollout = Rollout(
            environment: environment,
            plan: plan,
            state: .draft,
            step: -1,
            stepStartTime: nil,
            createTime: now,
            creator: actor.name,
            updateTime: now
        )
        let text = JSONValue.object(RolloutJSON.plan(plan)).serialized(.compact)
        let kind = engine.kind
        do {
            try await engine.transaction { database in
                try await ConfigStore.lockEnvironment(database, environment, kind: kind)
                try await database.raw(
                    """
                    INSERT INTO rollouts (project_id, environment_id, rollout_id, plan, state, step, create_time, creator, update_time) \
                    VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \(bind: plan.id), \(bind: text), \
                    \(bind: RolloutState.draft.rawValue), -1, \(bind: now), \(bind: actor.name), \(bind: now))
                    """
                ).run()
                try await ConfigStore.insertAudit(
                    database,
                    actor: actor,
                    action: .rolloutCreate,
                    projectId: environment.projectId,
                    environmentId: environment.environmentId,
                    summary: "created rollout \(plan.id)",
                    details: ["rollout": .string(plan.id), "plan": .object(RolloutJSON.plan(plan))]
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.rolloutExists(plan.id)
        }
        return rollout
    }

    /// An environment's rollouts, newest first.
    package func rollouts(_ environment: EnvironmentKey) async throws -> [Rollout] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT * FROM rollouts WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId) ORDER BY create_time DESC, rollout_id
                """
            ).all().map(Self.rollout)
        }
    }

    /// Every running rollout of every environment: what the guard watches.
    package func running() async throws -> [Rollout] {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT * FROM rollouts WHERE state = \(bind: RolloutState.running.rawValue) ORDER BY project_id, environment_id, rollout_id"
            ).all().map(Self.rollout)
        }
    }

    package func rollout(_ environment: EnvironmentKey, id: String) async throws -> Rollout? {
        try await engine.withSession { database in try await Self.row(database, environment, id: id) }
    }

    /// A rollout's decisions, oldest first.
    package func decisions(_ environment: EnvironmentKey, id: String) async throws -> [RolloutDecision] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT * FROM rollout_decisions WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId) AND rollout_id = \(bind: id) ORDER BY sequence
                """
            ).all().map(Self.decision)
        }
    }

    /// A change without a publish (hold, pause, resume, stop): in one transaction, the claim,
    /// the decision, its audit entry and its webhook; for a stop, the step experiment stops too.
    /// - Throws: ``StorageError/rolloutNotFound(_:)``, ``StorageError/rolloutState(id:state:action:)``.
    package func change(
        _ environment: EnvironmentKey,
        id: String,
        from states: Set<RolloutState>,
        step expectedStep: Int?,
        unchangedSince updateTime: Int64? = nil,
        to state: RolloutState,
        decision: RolloutDecision,
        actor: Actor,
        webhook: WebhookEventType
    ) async throws -> Rollout {
        let kind = engine.kind
        return try await engine.transaction { database in
            try await ConfigStore.lockEnvironment(database, environment, kind: kind)
            guard let rollout = try await Self.row(database, environment, id: id) else {
                throw StorageError.rolloutNotFound(id)
            }
            guard states.contains(rollout.state), expectedStep.map({ $0 == rollout.step }) ?? true else {
                throw StorageError.rolloutState(id: id, state: rollout.state.rawValue, action: decision.action.rawValue)
            }
            var changed = try await Self.claim(
                database,
                environment,
                id: id,
                from: rollout.state,
                step: rollout.step,
                to: state,
                step: rollout.step,
                stepStart: rollout.stepStartTime,
                now: decision.time,
                unchangedSince: updateTime
            )
            changed.plan = rollout.plan
            if state.isFinal {
                try await Self.stopStepExperiment(database, environment, rollout: rollout, now: decision.time)
            }
            let version = try await ConfigStore.currentVersion(database, environment)
            try await Self.record(
                database,
                environment,
                id: id,
                decision,
                actor: actor,
                kind: kind,
                version: version,
                webhook: webhook
            )
            return changed
        }
    }

    // MARK: - Inside a transaction, for the rollout's publishes

    /// The compare-and-set: moves the rollout from (`state`, `step`) — and, when given, as it was
    /// at `updateTime` — to (`newState`, `newStep`), or throws ``StorageError/rolloutState(id:state:action:)`` when the row is elsewhere (another
    /// node decided first).
    package static func claim(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        id: String,
        from state: RolloutState,
        step: Int,
        to newState: RolloutState,
        step newStep: Int,
        stepStart: Int64?,
        now: Int64,
        unchangedSince updateTime: Int64? = nil
    ) async throws -> Rollout {
        // The guard also expects the row as it read it (its update time), so two passes that read
        // the same step cannot both record a hold; update times only grow, also within a millisecond.
        let unchanged = updateTime.map { SQLQueryString(" AND update_time = \(bind: $0)") } ?? SQLQueryString("")
        guard
            let row = try await database.raw(
                """
                UPDATE rollouts SET state = \(bind: newState.rawValue), step = \(bind: newStep), \
                step_start_time = \(bind: stepStart), \
                update_time = (CASE WHEN update_time >= \(bind: now) THEN update_time + 1 ELSE \(bind: now) END) \
                WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) \
                AND rollout_id = \(bind: id) AND state = \(bind: state.rawValue) AND step = \(bind: step)\(unchanged) \
                RETURNING *
                """
            ).first()
        else {
            let current = try await Self.row(database, environment, id: id)
            throw StorageError.rolloutState(
                id: id,
                state: current.map { "\($0.state.rawValue) at step \($0.step + 1)" } ?? "gone",
                action: "move from \(state.rawValue) at step \(step + 1)"
            )
        }
        return try rollout(row)
    }

    /// Records a decision, its audit entry and its webhook message.
    package static func record(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        id: String,
        _ decision: RolloutDecision,
        actor: Actor,
        kind: DatabaseEngine.Kind,
        version: Int64,
        webhook: WebhookEventType?
    ) async throws {
        let next =
            try await database.raw(
                """
                SELECT COALESCE(MAX(sequence), 0) AS newest FROM rollout_decisions \
                WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) \
                AND rollout_id = \(bind: id)
                """
            ).first()?.decode(column: "newest", as: Int64.self) ?? 0
        let figures = decision.figures.map { JSONValue.object($0).serialized(.compact) }
        try await database.raw(
            """
            INSERT INTO rollout_decisions (project_id, environment_id, rollout_id, sequence, decision_time, step, percent, action, actor, reason, figures) \
            VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \(bind: id), \(bind: next + 1), \
            \(bind: decision.time), \(bind: decision.step), \(bind: decision.percent), \(bind: decision.action.rawValue), \(bind: decision.actor), \
            \(bind: decision.reason), \(bind: figures))
            """
        ).run()
        let action: AuditAction
        switch decision.action {
        case .start: action = .rolloutStart
        case .advance, .complete: action = .rolloutAdvance
        case .hold: action = .rolloutHold
        case .pause: action = .rolloutPause
        case .resume: action = .rolloutResume
        case .stop: action = .rolloutStop
        case .rollBack: action = .rolloutRollBack
        }
        var details: JSONObject = [
            "rollout": .string(id), "step": .number(JSONNumber(decision.step + 1)),
            "percent": .number(JSONNumber(decision.percent)), "reason": .string(decision.reason),
        ]
        if let figures = decision.figures { details["figures"] = .object(figures) }
        try await ConfigStore.insertAudit(
            database,
            actor: actor,
            action: action,
            projectId: environment.projectId,
            environmentId: environment.environmentId,
            summary: "rollout \(id): \(decision.action.rawValue) at \(RolloutPlan.percentText(decision.percent)) %",
            details: .object(details)
        )
        if let webhook {
            try await WebhookStore.enqueue(
                database,
                kind: kind,
                change: WebhookChange(type: webhook, details: details),
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                version: version,
                actor: actor
            )
        }
    }

    /// Starts step `step`'s experiment (stopping the previous step's): from now on its arms'
    /// exposures and metric events count there.
    /// - Throws: ``StorageError/parameterInRunningExperiment(parameter:experiment:)`` when an
    ///   experiment outside the rollout controls one of its parameters.
    package static func startStepExperiment(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        plan: RolloutPlan,
        step: Int,
        now: Int64,
        version: Int64,
        actor: Actor
    ) async throws {
        if step > 0 {
            try await stopExperiment(
                database,
                environment,
                key: RolloutPlan.experimentKey(id: plan.id, step: step - 1),
                now: now
            )
        }
        let definition = plan.stepExperiment(step: step)
        let running = try await database.raw(
            """
            SELECT * FROM experiments WHERE project_id = \(bind: environment.projectId) \
            AND environment_id = \(bind: environment.environmentId) AND status = \(bind: ExperimentStatus.running.rawValue)
            """
        ).all().map { try ExperimentStore.experiment($0, environment: environment) }
        for other in running {
            if let shared = definition.parameters.first(where: other.definition.parameters.contains) {
                throw StorageError.parameterInRunningExperiment(parameter: shared, experiment: other.key)
            }
        }
        let text = JSONValue.object(ExperimentJSON.definition(definition)).serialized(.compact)
        try await database.raw(
            """
            INSERT INTO experiments (project_id, environment_id, experiment_key, definition, status, create_time, creator, start_time, start_version) \
            VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \(bind: definition.key), \
            \(bind: text), \(bind: ExperimentStatus.running.rawValue), \(bind: now), \(bind: actor.name), \(bind: now), \(bind: version))
            """
        ).run()
    }

    /// Stops the rollout's current step experiment, if it runs.
    package static func stopStepExperiment(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        rollout: Rollout,
        now: Int64
    ) async throws {
        guard rollout.step >= 0 else { return }
        try await stopExperiment(database, environment, key: rollout.stepExperimentKey, now: now)
    }

    private static func stopExperiment(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        key: String,
        now: Int64
    ) async throws {
        try await database.raw(
            """
            UPDATE experiments SET status = \(bind: ExperimentStatus.stopped.rawValue), stop_time = \(bind: now) \
            WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) \
            AND experiment_key = \(bind: key) AND status = \(bind: ExperimentStatus.running.rawValue)
            """
        ).run()
    }

    package static func row(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        id: String
    ) async throws
        -> Rollout?
    {
        try await database.raw(
            """
            SELECT * FROM rollouts WHERE project_id = \(bind: environment.projectId) \
            AND environment_id = \(bind: environment.environmentId) AND rollout_id = \(bind: id)
            """
        ).first().map(rollout)
    }

    private static func rollout(_ row: any SQLRow) throws -> Rollout {
        let id = try row.decode(column: "rollout_id", as: String.self)
        let text = try row.decode(column: "plan", as: String.self)
        guard let object = (try? JSONValue.parse(text))?.objectValue else {
            throw UnreadablePlan(id: id, problems: "not a JSON object")
        }
        let plan: RolloutPlan
        switch RolloutPlanReader.read(object, seed: "") {
        case .success(let read): plan = read
        case .failure(let error):
            throw UnreadablePlan(id: id, problems: error.issues.map(\.description).joined(separator: "; "))
        }
        let stateText = try row.decode(column: "state", as: String.self)
        guard let state = RolloutState(rawValue: stateText) else {
            throw UnreadablePlan(id: id, problems: "unknown state \"\(stateText)\"")
        }
        return Rollout(
            environment: EnvironmentKey(
                projectId: try row.decode(column: "project_id", as: String.self),
                environmentId: try row.decode(column: "environment_id", as: String.self)
            ),
            plan: plan,
            state: state,
            step: Int(try row.decode(column: "step", as: Int64.self)),
            stepStartTime: try row.decode(column: "step_start_time", as: Int64?.self),
            createTime: try row.decode(column: "create_time", as: Int64.self),
            creator: try row.decode(column: "creator", as: String.self),
            updateTime: try row.decode(column: "update_time", as: Int64.self)
        )
    }

    private static func decision(_ row: any SQLRow) throws -> RolloutDecision {
        let actionText = try row.decode(column: "action", as: String.self)
        let figures = try row.decode(column: "figures", as: String?.self).flatMap {
            try? JSONValue.parse($0).objectValue
        }
        return RolloutDecision(
            time: try row.decode(column: "decision_time", as: Int64.self),
            step: Int(try row.decode(column: "step", as: Int64.self)),
            percent: try row.decode(column: "percent", as: Double.self),
            action: RolloutDecision.Action(rawValue: actionText) ?? .hold,
            actor: try row.decode(column: "actor", as: String.self),
            reason: try row.decode(column: "reason", as: String.self),
            figures: figures
        )
    }
}
