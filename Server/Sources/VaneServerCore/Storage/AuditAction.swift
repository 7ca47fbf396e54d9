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
    case webhookCreate = "webhook.create"
    case webhookUpdate = "webhook.update"
    case webhookDelete = "webhook.delete"
    case webhookRotateSecret = "webhook.rotate_secret"
    case webhookRedeliver = "webhook.redeliver"
}
