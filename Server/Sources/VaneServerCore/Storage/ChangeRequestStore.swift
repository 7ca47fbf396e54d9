import Foundation
package import SQLKit
import VaneCore

/// Change policies and change requests (migration 12), and the check every write that changes
/// what clients get makes inside its own transaction:
/// ``authorize(_:_:in:actor:publishes:)``. Every change here is one transaction with its audit
/// entry, the environment's row locked on PostgreSQL as a publish locks it, so a policy switched
/// on and a publish queue behind each other on every node.
package struct ChangeRequestStore: Sendable {
    package let engine: DatabaseEngine

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// An environment's policy, the version live when it was set, and who set it; ``ChangePolicy/off``
    /// and nil when none was ever set.
    package func policy(_ environment: EnvironmentKey) async throws -> (policy: ChangePolicy, effectiveVersion: Int64?)
    {
        try await engine.withSession { database in
            try await Self.policyRow(database, environment)
        }
    }

    /// Sets an environment's policy. While a policy is in force this needs an approved
    /// change request of kind `policy` (`authorization` `.request`).
    /// - Throws: ``ChangeRefusal``, ``StorageError/environmentNotFound(project:environment:)``.
    package func setPolicy(
        _ policy: ChangePolicy,
        in environment: EnvironmentKey,
        authorization: ChangeAuthorization,
        actor: Actor
    ) async throws -> Int64 {
        let kind = engine.kind
        return try await engine.transaction { database in
            try await ConfigStore.lockEnvironment(database, environment, kind: kind)
            let current = try await ConfigStore.currentVersion(database, environment)
            try await Self.authorize(
                database,
                authorization,
                in: environment,
                kind: "policy",
                actor: actor,
                liveVersion: current,
                publishes: false,
                engine: kind
            )
            try await database.raw(
                """
                DELETE FROM change_policies WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId)
                """
            ).run()
            try await database.raw(
                """
                INSERT INTO change_policies (project_id, environment_id, policy, effective_version, update_time, update_user) \
                VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \
                \(bind: JSONValue.object(policy.json()).serialized()), \(bind: current), \(bind: Clock.nowMilliseconds()), \
                \(bind: actor.name))
                """
            ).run()
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .changePolicyUpdate,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: policy.inForce
                    ? "change policy: \(policy.approvalsRequired) approval(s) required" : "change policy: off",
                details: .object(["policy": .object(policy.json()), "effectiveVersion": .string(String(current))])
            )
            return current
        }
    }

    /// Opens a change request on the live version.
    /// - Parameter draft: True keeps it a draft (no reviews yet); false asks for review at once.
    package func create(
        _ change: ProposedChange,
        in environment: EnvironmentKey,
        title: String,
        description: String,
        draft: Bool,
        author: ChangeActor
    ) async throws -> ChangeRequest {
        let kind = engine.kind
        return try await engine.transaction { database in
            try await ConfigStore.lockEnvironment(database, environment, kind: kind)
            let base = try await ConfigStore.currentVersion(database, environment)
            let now = Clock.nowMilliseconds()
            var request = ChangeRequest(
                id: RandomBytes.identifier(prefix: "cr_"),
                environment: environment,
                baseVersion: base,
                change: change,
                contentHash: "",
                revision: 1,
                title: title,
                description: description,
                authorId: author.id,
                authorName: author.actor.name,
                state: draft ? .draft : .inReview,
                createTime: now,
                updateTime: now,
                reviews: []
            )
            request.contentHash = request.computedHash
            try await database.raw(
                """
                INSERT INTO change_requests (id, project_id, environment_id, base_version, kind, change, content_hash, \
                revision, title, description, author_id, author_name, state, create_time, update_time) \
                VALUES (\(bind: request.id), \(bind: environment.projectId), \(bind: environment.environmentId), \
                \(bind: base), \(bind: change.kind), \(bind: JSONValue.object(change.json()).serialized()), \
                \(bind: request.contentHash), 1, \(bind: title), \(bind: description), \(bind: author.id), \
                \(bind: author.actor.name), \(bind: request.state.rawValue), \(bind: now), \(bind: now))
                """
            ).run()
            try await Self.enqueueWebhook(
                database,
                request,
                enteredState: request.state,
                version: base,
                actor: author.actor,
                engine: kind
            )
            try await ConfigStore.insertAudit(
                database,
                actor: author.actor,
                action: .changeRequestCreate,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "opened change request \(request.id) (\(change.kind)): \(title)",
                details: .object(["changeRequest": .string(request.id), "contentHash": .string(request.contentHash)])
            )
            return request
        }
    }

    /// One request with its reviews.
    package func request(_ environment: EnvironmentKey, id: String) async throws -> ChangeRequest {
        try await engine.withSession { database in
            try await Self.load(database, environment, id: id)
        }
    }

    /// An environment's requests, newest first, optionally in one state (at most 200).
    package func requests(_ environment: EnvironmentKey, state: ChangeRequestState?) async throws -> [ChangeRequest] {
        try await requests(environment, states: state.map { [$0] })
    }

    /// An environment's requests in any of `states` (all when nil), newest first, at most 200:
    /// the filter is the database's, so the newest 200 finished requests never hide an open one.
    package func requests(
        _ environment: EnvironmentKey,
        states: Set<ChangeRequestState>?
    ) async throws -> [ChangeRequest] {
        try await engine.withSession { database in
            let filter: SQLQueryString =
                states.map { " AND state IN (\(binds: $0.map(\.rawValue).sorted()))" } ?? ""
            let rows = try await database.raw(
                """
                SELECT * FROM change_requests WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId)\(filter) ORDER BY create_time DESC, id LIMIT 200
                """
            ).all()
            var requests: [ChangeRequest] = []
            for row in rows {
                var request = try Self.request(row, environment: environment)
                request.reviews = try await Self.reviews(database, id: request.id)
                requests.append(request)
            }
            return requests
        }
    }

    /// What an edit changes; nil members stay as they are.
    package struct Edit: Sendable {
        package var change: ProposedChange?
        package var title: String?
        package var description: String?
        /// Moves the request onto the live version (the way out of suspension).
        package var rebase: Bool
        /// Asks for review (a draft becomes in review).
        package var submit: Bool

        package init(change: ProposedChange?, title: String?, description: String?, rebase: Bool, submit: Bool) {
            self.change = change
            self.title = title
            self.description = description
            self.rebase = rebase
            self.submit = submit
        }
    }

    /// Edits a request: only its author, and only before it applied or was cancelled. Every edit
    /// is a new revision: the approvals and rejections given so far no longer count.
    package func edit(
        _ environment: EnvironmentKey,
        id: String,
        _ edit: Edit,
        by editor: ChangeActor
    ) async throws
        -> ChangeRequest
    {
        try await update(environment, id: id, by: editor.actor) { database, request in
            guard request.authorId == editor.id else {
                throw ChangeRefusal.notAllowed(
                    "only the author (\(request.authorName)) edits change request \(id); comment or open your own"
                )
            }
            guard !request.state.isFinal else {
                throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "be edited")
            }
            var edited = request
            if let change = edit.change { edited.change = change }
            if let title = edit.title { edited.title = title }
            if let description = edit.description { edited.description = description }
            if edit.rebase { edited.baseVersion = try await ConfigStore.currentVersion(database, environment) }
            edited.revision += 1
            edited.contentHash = edited.computedHash
            edited.state = request.state == .draft && !edit.submit ? .draft : .inReview
            edited.stateReason = nil
            try await ConfigStore.insertAudit(
                database,
                actor: editor.actor,
                action: .changeRequestEdit,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "edited change request \(id) (revision \(edited.revision)); its approvals no longer count",
                details: .object(["changeRequest": .string(id), "contentHash": .string(edited.contentHash)])
            )
            return edited
        }
    }

    /// Cancels a request that has not applied.
    package func cancel(_ environment: EnvironmentKey, id: String, by actor: Actor) async throws -> ChangeRequest {
        try await update(environment, id: id, by: actor) { database, request in
            guard !request.state.isFinal else {
                throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "be cancelled")
            }
            var cancelled = request
            cancelled.state = .cancelled
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .changeRequestCancel,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "cancelled change request \(id)",
                details: .object(["changeRequest": .string(id)])
            )
            return cancelled
        }
    }

    /// Gives an approved request a time to apply (or moves the time of a scheduled one). The
    /// approvals are counted again under the policy in force now; the scheduler counts them once
    /// more in the transaction that applies it. Check the time with
    /// ``ChangeRequest/applyTimeProblem(_:now:)`` first.
    package func schedule(
        _ environment: EnvironmentKey,
        id: String,
        at applyTime: Int64,
        by actor: ChangeActor
    ) async throws -> ChangeRequest {
        try await update(environment, id: id, by: actor.actor) { database, request in
            guard request.state.isApproved else {
                throw ChangeRefusal.state(
                    id: id,
                    state: request.state.rawValue,
                    action: "be scheduled (only an approved request is; get the current revision approved first)"
                )
            }
            let policy = try await Self.policyRow(database, environment).policy
            if let blocker = ChangeApproval.blocker(request, under: policy) {
                throw ChangeRefusal.notApproved(id: id, reason: blocker)
            }
            var scheduled = request
            scheduled.state = .scheduled
            scheduled.applyTime = applyTime
            scheduled.stateReason = "scheduled by \(actor.actor.name)"
            try await ConfigStore.insertAudit(
                database,
                actor: actor.actor,
                action: .changeRequestSchedule,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "scheduled change request \(id) to apply at \(Clock.rfc3339(milliseconds: applyTime))",
                details: .object([
                    "changeRequest": .string(id), "applyTime": .string(Clock.rfc3339(milliseconds: applyTime)),
                ])
            )
            return scheduled
        }
    }

    /// Takes a scheduled request's time away: it is approved again, to apply by hand or at a new time.
    package func unschedule(
        _ environment: EnvironmentKey,
        id: String,
        by actor: ChangeActor
    ) async throws
        -> ChangeRequest
    {
        try await update(environment, id: id, by: actor.actor) { database, request in
            guard request.state == .scheduled else {
                throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "be unscheduled")
            }
            var approved = request
            approved.state = .approved
            approved.stateReason = nil
            try await ConfigStore.insertAudit(
                database,
                actor: actor.actor,
                action: .changeRequestUnschedule,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "removed the scheduled time of change request \(id)",
                details: .object(["changeRequest": .string(id)])
            )
            return approved
        }
    }

    /// A scheduled request as the scheduler sees it.
    package struct ScheduledChange: Sendable, Hashable {
        package var environment: EnvironmentKey
        package var id: String
        package var applyTime: Int64
    }

    /// The scheduled requests of every environment, earliest first (at most `limit`): one indexed
    /// read the scheduler makes on each pass.
    package func scheduled(limit: Int) async throws -> [ScheduledChange] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT id, project_id, environment_id, apply_time FROM change_requests \
                WHERE state = \(bind: ChangeRequestState.scheduled.rawValue) AND apply_time IS NOT NULL \
                ORDER BY apply_time, id LIMIT \(bind: limit)
                """
            ).all().map { row in
                ScheduledChange(
                    environment: EnvironmentKey(
                        projectId: try row.decode(column: "project_id", as: String.self),
                        environmentId: try row.decode(column: "environment_id", as: String.self)
                    ),
                    id: try row.decode(column: "id", as: String.self),
                    applyTime: try row.decode(column: "apply_time", as: Int64.self)
                )
            }
        }
    }

    /// Records a review bound to the hash the reviewer saw, and moves the request to approved
    /// or rejected when the decision settles it. A comment can be left in any state; an
    /// approval or rejection only while the request is in review (or, after break-glass, as the
    /// post-hoc review).
    package func review(
        _ environment: EnvironmentKey,
        id: String,
        decision: ChangeReview.Decision,
        comment: String,
        seenHash: String?,
        by reviewer: ChangeActor
    ) async throws -> ChangeRequest {
        try await update(environment, id: id, by: reviewer.actor) { database, request in
            let policy = try await Self.policyRow(database, environment).policy
            var reviewed = request
            if decision != .comment {
                let open: Set<ChangeRequestState> = [.inReview, .approved, .scheduled, .rejected]
                guard open.contains(request.state) || (request.state == .applied && request.breakGlass != nil) else {
                    throw ChangeRefusal.state(
                        id: id,
                        state: request.state.rawValue,
                        action: decision == .approve ? "be approved" : "be rejected"
                    )
                }
                guard let seenHash else {
                    throw ChangeRefusal.hashMismatch(id: id, seen: "(none)", current: request.contentHash)
                }
                guard seenHash == request.contentHash else {
                    throw ChangeRefusal.hashMismatch(id: id, seen: seenHash, current: request.contentHash)
                }
                if let problem = ChangeApproval.mayReview(reviewer, authorId: request.authorId, under: policy) {
                    throw ChangeRefusal.notAllowed(problem)
                }
            }
            let sequence =
                try await database.raw(
                    "SELECT COALESCE(MAX(sequence), 0) AS newest FROM change_reviews WHERE request_id = \(bind: id)"
                ).first()?.decode(column: "newest", as: Int64.self) ?? 0
            let review = ChangeReview(
                reviewerId: reviewer.id,
                reviewerName: reviewer.actor.name,
                decision: decision,
                comment: comment,
                contentHash: request.contentHash,
                revision: request.revision,
                time: Clock.nowMilliseconds()
            )
            try await database.raw(
                """
                INSERT INTO change_reviews (request_id, sequence, reviewer_id, reviewer_name, decision, comment, content_hash, revision, time) \
                VALUES (\(bind: id), \(bind: sequence + 1), \(bind: review.reviewerId), \(bind: review.reviewerName), \
                \(bind: decision.rawValue), \(bind: comment), \(bind: review.contentHash), \(bind: review.revision), \(bind: review.time))
                """
            ).run()
            reviewed.reviews.append(review)
            if reviewed.state != .applied && decision != .comment {
                // A scheduled request that is still approved keeps its time; one that is not any
                // more loses it.
                let approved = request.state == .scheduled ? ChangeRequestState.scheduled : .approved
                reviewed.state = ChangeApproval.blocker(reviewed, under: policy) == nil ? approved : .inReview
                if reviewed.currentReviews.contains(where: { $0.decision == .reject }) { reviewed.state = .rejected }
            }
            try await ConfigStore.insertAudit(
                database,
                actor: reviewer.actor,
                action: .changeRequestReview,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "\(decision.rawValue) on change request \(id) (revision \(request.revision))",
                details: .object([
                    "changeRequest": .string(id), "decision": .string(decision.rawValue),
                    "contentHash": .string(request.contentHash),
                ])
            )
            return reviewed
        }
    }

    /// Suspends a request whose live version moved under it and that does not rebase cleanly.
    /// - Parameter scheduledFor: Suspends it only while it is still scheduled for this time (the
    ///   scheduler's suspension must not hit a request edited, unscheduled or applied meanwhile).
    package func suspend(
        _ environment: EnvironmentKey,
        id: String,
        reason: String,
        by actor: Actor,
        scheduledFor: Int64? = nil
    ) async throws {
        _ = try await update(environment, id: id, by: actor) { database, request in
            guard !request.state.isFinal, request.state != .suspended else { return request }
            if let scheduledFor, request.state != .scheduled || request.applyTime != scheduledFor { return request }
            var suspended = request
            suspended.state = .suspended
            suspended.stateReason = reason
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .changeRequestSuspend,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: "suspended change request \(id): \(reason)",
                details: .object(["changeRequest": .string(id)])
            )
            return suspended
        }
    }

    /// Checks that a write may change `environment`, inside the write's transaction, after the
    /// environment's row is locked: no policy in force, the kill switch pre-approved, or a
    /// change request approved under the policy in force now, at its current hash and on the
    /// live version; a request it applies is marked applied in the same transaction.
    /// - Parameters:
    ///   - kind: The change request kind the 409 tells the caller to open.
    ///   - liveVersion: The live version, read in the transaction.
    ///   - publishes: Whether the write publishes the next version.
    /// - Throws: ``ChangeRefusal``.
    package static func authorize(
        _ database: any SQLDatabase,
        _ authorization: ChangeAuthorization,
        in environment: EnvironmentKey,
        kind: String,
        actor: Actor,
        liveVersion: Int64,
        publishes: Bool,
        engine engineKind: DatabaseEngine.Kind
    ) async throws {
        let appliedVersion = publishes ? liveVersion + 1 : liveVersion
        let policy = try await policyRow(database, environment).policy
        let id: String
        switch authorization {
        case .direct(let what):
            guard policy.inForce else { return }
            throw ChangeRefusal.changeRequestRequired(
                environment,
                what: what,
                approvals: policy.approvalsRequired,
                kind: kind
            )
        case .killSwitch:
            guard policy.inForce, !policy.killSwitchPreApproved else { return }
            throw ChangeRefusal.changeRequestRequired(
                environment,
                what: "the kill switch",
                approvals: policy.approvalsRequired,
                kind: "template"
            )
        case .rollout(let rolloutId):
            guard policy.inForce else { return }
            let started = try await database.raw(
                """
                SELECT state FROM rollouts WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId) AND rollout_id = \(bind: rolloutId) \
                AND state IN ('running', 'paused')
                """
            ).first()
            guard started == nil else { return }
            throw ChangeRefusal.changeRequestRequired(
                environment,
                what: "starting rollout \(rolloutId)",
                approvals: policy.approvalsRequired,
                kind: "rollout_start"
            )
        case .request(let requestId), .scheduled(let requestId): id = requestId
        case .breakGlass(let requestId, _, let by):
            id = requestId
            guard by.isNamed(in: policy.breakGlass) else {
                throw ChangeRefusal.notAllowed(
                    "\(by.actor.name) may not break glass in \(environment): the change policy's breakGlass list "
                        + "does not name them; ask for approval instead"
                )
            }
        }
        let request = try await load(database, environment, id: id)
        guard !request.state.isFinal else {
            throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "apply")
        }
        let scheduled: Bool
        if case .scheduled = authorization {
            // The claim: only a request still scheduled applies as scheduled, so the node that
            // comes second (after the environment's lock) finds it applied and stops here.
            guard request.state == .scheduled else {
                throw ChangeRefusal.state(id: id, state: request.state.rawValue, action: "apply as scheduled")
            }
            scheduled = true
        } else {
            scheduled = false
        }
        guard request.change.kind == kind else {
            throw ChangeRefusal.notApproved(id: id, reason: "it proposes a \(request.change.kind) change, not \(kind)")
        }
        // The hash is computed again from what is stored: what was approved is what applies.
        let hash = request.computedHash
        guard hash == request.contentHash else {
            throw ChangeRefusal.notApproved(id: id, reason: "its stored change does not match its content hash")
        }
        var breakGlass: String?
        if case .breakGlass(_, let reason, _) = authorization {
            breakGlass = reason
        } else {
            if request.state == .suspended {
                throw ChangeRefusal.suspended(id: id, reason: request.stateReason ?? "it went stale")
            }
            if let blocker = ChangeApproval.blocker(request, under: policy) {
                throw ChangeRefusal.notApproved(id: id, reason: blocker)
            }
        }
        // A publish's base is checked by its expected version (or it was rebased); any other
        // kind applies only on the version its reviewers saw.
        if !request.change.publishesVersion && request.baseVersion != liveVersion && breakGlass == nil {
            throw ChangeRefusal.suspended(
                id: id,
                reason: "it was approved on version \(request.baseVersion), and version \(liveVersion) is live"
            )
        }
        let stateReason = breakGlass.map { _ in "applied by break-glass; awaiting post-hoc review" }
        // A request applied before its time (by hand) no longer shows one.
        let applyTime = scheduled ? request.applyTime : nil
        let claimed = try await database.raw(
            """
            UPDATE change_requests SET state = \(bind: ChangeRequestState.applied.rawValue), \
            applied_version = \(bind: appliedVersion), break_glass = \(bind: breakGlass), \
            state_reason = \(bind: stateReason), apply_time = \(bind: applyTime), \
            update_time = \(bind: Clock.nowMilliseconds()) WHERE id = \(bind: id) \
            AND state = \(bind: request.state.rawValue) RETURNING id
            """
        ).first()
        guard claimed != nil else {
            throw ChangeRefusal.state(id: id, state: "changed meanwhile", action: "apply")
        }
        var applied = request
        applied.state = .applied
        applied.stateReason = stateReason
        applied.applyTime = applyTime
        try await enqueueWebhook(
            database,
            applied,
            enteredState: .applied,
            version: appliedVersion,
            actor: actor,
            engine: engineKind
        )
        var details: JSONObject = [
            "changeRequest": .string(id), "contentHash": .string(hash), "version": .string(String(appliedVersion)),
        ]
        if let breakGlass { details["reason"] = .string(breakGlass) }
        var summary =
            breakGlass.map { "BREAK-GLASS: applied change request \(id) unapproved: \($0)" }
            ?? "applied change request \(id) (\(request.change.kind))"
        if scheduled, let applyTime {
            let approvers = ChangeApproval.approvals(of: request, under: policy).map(\.reviewerName)
            summary =
                "scheduled apply of change request \(id) (\(request.change.kind)) due "
                + "\(Clock.rfc3339(milliseconds: applyTime)), approved by \(approvers.joined(separator: ", "))"
            details["applyTime"] = .string(Clock.rfc3339(milliseconds: applyTime))
            details["approvedBy"] = .array(approvers.map(JSONValue.string))
        }
        try await ConfigStore.insertAudit(
            database,
            actor: actor,
            action: breakGlass == nil ? .changeRequestApply : .changeRequestBreakGlass,
            projectId: environment.projectId,
            environmentId: environment.environmentId,
            summary: summary,
            details: .object(details)
        )
    }

    /// Tells webhook endpoints that a request entered a state they hear about (opened, approved,
    /// rejected, applied, suspended), in the transaction that moved it.
    static func enqueueWebhook(
        _ database: any SQLDatabase,
        _ request: ChangeRequest,
        enteredState state: ChangeRequestState,
        version: Int64,
        actor: Actor,
        engine kind: DatabaseEngine.Kind
    ) async throws {
        guard let change = WebhookChange.changeRequest(request, enteredState: state) else { return }
        try await WebhookStore.enqueue(
            database,
            kind: kind,
            change: change,
            projectId: request.environment.projectId,
            environmentId: request.environment.environmentId,
            version: version,
            actor: actor
        )
    }

    // MARK: - Rows

    private func update(
        _ environment: EnvironmentKey,
        id: String,
        by actor: Actor,
        _ transform: @escaping @Sendable (any SQLDatabase, ChangeRequest) async throws -> ChangeRequest
    ) async throws -> ChangeRequest {
        let kind = engine.kind
        return try await engine.transaction { database in
            try await ConfigStore.lockEnvironment(database, environment, kind: kind)
            let request = try await Self.load(database, environment, id: id)
            var changed = try await transform(database, request)
            changed.updateTime = Clock.nowMilliseconds()
            // A time to apply belongs to a scheduled request only (an edit, a rejection, a
            // cancellation or a suspension voids it).
            if changed.state != .scheduled {
                changed.applyTime = nil
                // So does the note of who scheduled it.
                if request.state == .scheduled && changed.stateReason == request.stateReason {
                    changed.stateReason = nil
                }
            }
            // Scheduling or unscheduling an approved request tells endpoints nothing new.
            let rescheduled = request.state.isApproved && changed.state.isApproved
            // An edit of a request in review opens it again: its approvals no longer count.
            if (changed.state != request.state && !rescheduled)
                || (changed.state == .inReview && changed.revision != request.revision)
            {
                try await Self.enqueueWebhook(
                    database,
                    changed,
                    enteredState: changed.state,
                    version: try await ConfigStore.currentVersion(database, environment),
                    actor: actor,
                    engine: kind
                )
            }
            try await database.raw(
                """
                UPDATE change_requests SET base_version = \(bind: changed.baseVersion), kind = \(bind: changed.change.kind), \
                change = \(bind: JSONValue.object(changed.change.json()).serialized()), content_hash = \(bind: changed.contentHash), \
                revision = \(bind: changed.revision), title = \(bind: changed.title), description = \(bind: changed.description), \
                state = \(bind: changed.state.rawValue), state_reason = \(bind: changed.stateReason), \
                apply_time = \(bind: changed.applyTime), update_time = \(bind: changed.updateTime) WHERE id = \(bind: id)
                """
            ).run()
            return changed
        }
    }

    static func policyRow(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey
    ) async throws
        -> (policy: ChangePolicy, effectiveVersion: Int64?)
    {
        guard
            let row = try await database.raw(
                """
                SELECT policy, effective_version FROM change_policies WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId)
                """
            ).first()
        else { return (.off, nil) }
        let text = try row.decode(column: "policy", as: String.self)
        guard let object = try? JSONValue.parse(text).objectValue, let policy = try? ChangePolicy.read(object) else {
            // A row this server cannot read keeps the strictest reading rather than none.
            return (
                ChangePolicy(
                    approvalsRequired: ChangePolicy.maximumApprovals,
                    selfApproval: false,
                    approvers: [],
                    breakGlass: [],
                    killSwitchPreApproved: false
                ), nil
            )
        }
        return (policy, try row.decode(column: "effective_version", as: Int64.self))
    }

    private static func load(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        id: String
    )
        async throws -> ChangeRequest
    {
        guard
            let row = try await database.raw(
                """
                SELECT * FROM change_requests WHERE id = \(bind: id) AND project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId)
                """
            ).first()
        else { throw ChangeRefusal.notFound(id) }
        var request = try Self.request(row, environment: environment)
        request.reviews = try await reviews(database, id: id)
        return request
    }

    private static func reviews(_ database: any SQLDatabase, id: String) async throws -> [ChangeReview] {
        try await database.raw(
            "SELECT * FROM change_reviews WHERE request_id = \(bind: id) ORDER BY sequence"
        ).all().map { row in
            ChangeReview(
                reviewerId: try row.decode(column: "reviewer_id", as: String.self),
                reviewerName: try row.decode(column: "reviewer_name", as: String.self),
                decision: ChangeReview.Decision(rawValue: try row.decode(column: "decision", as: String.self))
                    ?? .comment,
                comment: try row.decode(column: "comment", as: String.self),
                contentHash: try row.decode(column: "content_hash", as: String.self),
                revision: try row.decode(column: "revision", as: Int64.self),
                time: try row.decode(column: "time", as: Int64.self)
            )
        }
    }

    private static func request(_ row: any SQLRow, environment: EnvironmentKey) throws -> ChangeRequest {
        let changeText = try row.decode(column: "change", as: String.self)
        let change = try ProposedChange.read(try JSONValue.parse(changeText))
        return ChangeRequest(
            id: try row.decode(column: "id", as: String.self),
            environment: environment,
            baseVersion: try row.decode(column: "base_version", as: Int64.self),
            change: change,
            contentHash: try row.decode(column: "content_hash", as: String.self),
            revision: try row.decode(column: "revision", as: Int64.self),
            title: try row.decode(column: "title", as: String.self),
            description: try row.decode(column: "description", as: String.self),
            authorId: try row.decode(column: "author_id", as: String.self),
            authorName: try row.decode(column: "author_name", as: String.self),
            state: ChangeRequestState(rawValue: try row.decode(column: "state", as: String.self)) ?? .suspended,
            stateReason: try row.decode(column: "state_reason", as: String?.self),
            appliedVersion: try row.decode(column: "applied_version", as: Int64?.self),
            breakGlass: try row.decode(column: "break_glass", as: String?.self),
            applyTime: try row.decode(column: "apply_time", as: Int64?.self),
            createTime: try row.decode(column: "create_time", as: Int64.self),
            updateTime: try row.decode(column: "update_time", as: Int64.self),
            reviews: []
        )
    }
}
