package import VaneCore

/// What kind of change an audit entry records, for people reading the log: a publish says
/// whether it was a kill switch, a rollback, an applied change request or a rollout's step (its
/// details' `kind`); every other entry's kind follows from its action.
package enum AuditKind: String, Sendable, Hashable, CaseIterable {
    case publish
    case rollback
    case killSwitch = "kill_switch"
    case changeRequest = "change_request"
    case experiment
    case rollout
    case changePolicy = "change_policy"
    case key
    case project
    case environment
    case person
    case webhook

    /// The kind of an entry with this action and these details.
    package init(action: String, details: JSONValue) {
        if case .object(let object) = details, let text = object["kind"]?.stringValue,
            let kind = AuditKind(rawValue: text)
        {
            self = kind
            return
        }
        let prefix = action.split(separator: ".").first.map(String.init) ?? action
        switch prefix {
        case "template": self = action == AuditAction.templateRollback.rawValue ? .rollback : .publish
        case "experiment": self = .experiment
        case "rollout": self = .rollout
        case "change_policy": self = .changePolicy
        case "change_request": self = .changeRequest
        case "key": self = .key
        case "project": self = .project
        case "environment": self = .environment
        case "user": self = .person
        default: self = .webhook
        }
    }

    /// The kind of a publish: how it was authorized and what it announced.
    package static func ofPublish(
        rollbackSource: Int64?,
        authorization: ChangeAuthorization,
        change: WebhookChange?
    ) -> AuditKind {
        if rollbackSource != nil { return .rollback }
        if change?.type == .killSwitch { return .killSwitch }
        switch authorization {
        case .request, .scheduled, .breakGlass: return .changeRequest
        case .direct, .killSwitch: return .publish
        case .rollout: return .rollout
        }
    }

    /// The kind in words, as the console's log shows it.
    package var label: String {
        switch self {
        case .publish: "Publish"
        case .rollback: "Rollback"
        case .killSwitch: "Kill switch"
        case .changeRequest: "Change request"
        case .experiment: "Experiment"
        case .rollout: "Rollout"
        case .changePolicy: "Change policy"
        case .key: "API key"
        case .project: "Project"
        case .environment: "Environment"
        case .person: "Person"
        case .webhook: "Webhook"
        }
    }
}
