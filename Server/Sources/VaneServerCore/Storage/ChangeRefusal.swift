/// How a write that changes what clients get is authorized, checked by
/// ``ChangeRequestStore/authorize(_:_:in:actor:publishes:)`` inside the write's own transaction.
package enum ChangeAuthorization: Sendable {
    /// No change request: allowed only while no policy is in force. `what` names the path for
    /// the refusal (`PUT …/template`).
    case direct(String)
    /// The kill switch: allowed without a request when the policy declares it pre-approved.
    case killSwitch
    /// Applies change request `id`, which must be approved, at its hash, on the live version.
    case request(String)
    /// Applies change request `id` at its scheduled time: it must still be scheduled (the claim
    /// that keeps a second node from applying it too) and approved, at its hash.
    case scheduled(String)
    /// Applies change request `id` at once by break-glass, with the reason; the actor must be
    /// named in the policy's `breakGlass` list.
    case breakGlass(String, reason: String, by: ChangeActor)
    /// A step, completion or roll back of rollout `id`: allowed while no policy is in force, or
    /// when the rollout is running or paused — it was started directly before the policy, or
    /// by an approved `rollout_start` request, and advances by itself from then on.
    case rollout(String)
}

/// Why a change was refused or a change request cannot do what was asked; each case says what
/// to do instead. Nothing was written.
package enum ChangeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// A policy is in force and the write applies no change request.
    case changeRequestRequired(EnvironmentKey, what: String, approvals: Int, kind: String)
    /// The request is not approved at its current revision (missing, rejected or self approvals).
    case notApproved(id: String, reason: String)
    /// The live version moved under the request and it does not rebase, or it went stale.
    case suspended(id: String, reason: String)
    /// No such change request in the environment.
    case notFound(String)
    /// The request's state does not allow this.
    case state(id: String, state: String, action: String)
    /// The reviewer saw another revision than the current one.
    case hashMismatch(id: String, seen: String, current: String)
    /// The actor may not review, edit or break glass.
    case notAllowed(String)

    package var description: String {
        switch self {
        case .changeRequestRequired(let environment, let what, let approvals, let kind):
            return
                "\(environment) changes only through approved change requests (\(approvals) approval(s)); "
                + "\(what) was not applied. Open one with POST /v1/projects/\(environment.projectId)/environments/"
                + "\(environment.environmentId)/change-requests {\"title\": …, \"change\": {\"kind\": \"\(kind)\", …}} "
                + "(vane change-requests create), get it approved, then apply it (…/change-requests/{id}/apply)"
        case .notApproved(let id, let reason):
            return "change request \(id) is not approved: \(reason); nothing was applied"
        case .suspended(let id, let reason):
            return
                "change request \(id) is suspended: \(reason). Nothing was applied; the author edits it onto the live "
                + "version (PATCH with the change and baseVersion) and asks for approval again"
        case .notFound(let id):
            return "no change request \"\(id.prefix(64))\" in this environment; list them with GET …/change-requests"
        case .state(let id, let state, let action):
            return "change request \(id) is \(state), so it cannot \(action)"
        case .hashMismatch(let id, let seen, let current):
            return
                "change request \(id) changed since you looked (you reviewed \(seen.prefix(12))…, it is now "
                + "\(current.prefix(12))…); GET it again and review what will be applied"
        case .notAllowed(let message):
            return message
        }
    }

    /// The machine-readable code the API answers with.
    package var code: String {
        switch self {
        case .changeRequestRequired: "CHANGE_REQUEST_REQUIRED"
        case .notApproved: "CHANGE_REQUEST_NOT_APPROVED"
        case .suspended: "CHANGE_REQUEST_SUSPENDED"
        case .hashMismatch: "CHANGE_REQUEST_CHANGED"
        case .notFound: "NOT_FOUND"
        case .state: "FAILED_PRECONDITION"
        case .notAllowed: "PERMISSION_DENIED"
        }
    }
}
