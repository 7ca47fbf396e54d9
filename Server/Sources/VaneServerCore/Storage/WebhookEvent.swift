package import VaneCore

/// Every kind of change a webhook endpoint can subscribe to: the one list the outbox writes,
/// the API accepts and docs/openapi.yaml documents.
package enum WebhookEventType: String, Sendable, Hashable, CaseIterable {
    case versionPublished = "version.published"
    case versionRolledBack = "version.rolled_back"
    case killSwitch = "flag.kill_switch"
    case experimentStarted = "experiment.started"
    case experimentStopped = "experiment.stopped"
    case changeRequestOpened = "change_request.opened"
    case changeRequestApproved = "change_request.approved"
    case changeRequestRejected = "change_request.rejected"
    case changeRequestApplied = "change_request.applied"
    case changeRequestSuspended = "change_request.suspended"
    case rolloutStarted = "rollout.started"
    case rolloutAdvanced = "rollout.advanced"
    case rolloutCompleted = "rollout.completed"
    case rolloutRolledBack = "rollout.rolled_back"
    case rolloutHeld = "rollout.held"
    case rolloutPaused = "rollout.paused"
    case rolloutResumed = "rollout.resumed"
    case rolloutStopped = "rollout.stopped"
}

/// What one change tells webhook endpoints: its type and what it carries beyond the project,
/// environment, version, actor and time every payload has.
package struct WebhookChange: Sendable, Hashable {
    package var type: WebhookEventType
    /// Members added to the payload's `data` (`flag` and `position`, `experiment`, `rollbackSource`).
    package var details: JSONObject

    package init(type: WebhookEventType, details: JSONObject = [:]) {
        self.type = type
        self.details = details
    }

    /// A version published, or for a rollback republished from `rollbackSource`.
    package static func published(rollbackSource: Int64?) -> WebhookChange {
        guard let rollbackSource else { return WebhookChange(type: .versionPublished) }
        return WebhookChange(
            type: .versionRolledBack,
            details: ["rollbackSource": .number(JSONNumber(Int(rollbackSource)))]
        )
    }

    /// A Boolean flag's kill switch thrown to `position` (`on` or `off`).
    package static func killSwitch(flag: String, position: String) -> WebhookChange {
        WebhookChange(type: .killSwitch, details: ["flag": .string(flag), "position": .string(position)])
    }

    /// A change request that entered `state`, when an endpoint is told about that state
    /// (opened for review, approved, rejected, applied, suspended); nil for the others.
    package static func changeRequest(
        _ request: ChangeRequest,
        enteredState state: ChangeRequestState
    ) -> WebhookChange? {
        let type: WebhookEventType
        switch state {
        case .inReview: type = .changeRequestOpened
        case .approved: type = .changeRequestApproved
        case .rejected: type = .changeRequestRejected
        case .applied: type = .changeRequestApplied
        case .suspended: type = .changeRequestSuspended
        default: return nil
        }
        var details: JSONObject = [
            "changeRequest": .string(request.id), "title": .string(request.title), "kind": .string(request.change.kind),
            "contentHash": .string(request.contentHash), "author": .string(request.authorName),
        ]
        if let reason = request.stateReason { details["reason"] = .string(reason) }
        return WebhookChange(type: type, details: details)
    }

    /// The body of a delivery (Standard Webhooks' `type`, `timestamp`, `data`): compact JSON.
    /// - Parameter version: The environment's template version the change made or happened on.
    package func payload(
        projectId: String,
        environmentId: String,
        version: Int64,
        actor: Actor,
        time: Int64
    ) -> String {
        var data: JSONObject = [
            "project": .string(projectId), "environment": .string(environmentId),
            "version": .number(JSONNumber(Int(version))), "actor": .string(actor.name),
            "time": .string(Clock.rfc3339(milliseconds: time)),
        ]
        for member in details { data[member.key] = member.value }
        let payload: JSONObject = [
            "type": .string(type.rawValue), "timestamp": .string(Clock.rfc3339(milliseconds: time)),
            "data": .object(data),
        ]
        return JSONValue.object(payload).serialized(.compact)
    }
}
