/// Every kind of change the audit log records: the one list the stores write, the console
/// filters by and docs/openapi.yaml documents (a test compares them).
package enum AuditAction: String, Sendable, Hashable, CaseIterable {
    case templatePublish = "template.publish"
    case templateRollback = "template.rollback"
    case keyCreate = "key.create"
    case keyRevoke = "key.revoke"
    case projectCreate = "project.create"
    case environmentCreate = "environment.create"
    case userCreate = "user.create"
    case userUpdate = "user.update"
    case userPassword = "user.password"
    case experimentCreate = "experiment.create"
    case experimentStart = "experiment.start"
    case experimentStop = "experiment.stop"
    case changePolicyUpdate = "change_policy.update"
    case changeRequestCreate = "change_request.create"
    case changeRequestEdit = "change_request.edit"
    case changeRequestReview = "change_request.review"
    case changeRequestCancel = "change_request.cancel"
    case changeRequestSuspend = "change_request.suspend"
    case changeRequestApply = "change_request.apply"
    case changeRequestBreakGlass = "change_request.break_glass"
}
