/// Every template in `Assets/templates`, by its file name: pages render one of these, so a page
/// cannot ask for a template that is not there. ``ConsoleAssets`` refuses to start without each
/// of them, and ConsoleTemplateTests renders each with a page model.
enum ConsoleTemplate: String, CaseIterable, Sendable {
    case account
    case audit
    case changeRequest = "change-request"
    case changeRequests = "change-requests"
    case conditionEdit = "condition-edit"
    case conditions
    case copy
    case diff
    case diffPartial = "diff-partial"
    case error
    case evaluate
    case experiment
    case experimentConfirm = "experiment-confirm"
    case experimentNew = "experiment-new"
    case experiments
    case flagEditor = "flag-editor"
    case flagSwitch = "flag-switch"
    case flags
    case history
    case keys
    case layout
    case policyPartial = "policy-partial"
    case projects
    case review
    case rollback
    case rollout
    case rolloutConfirm = "rollout-confirm"
    case rolloutNew = "rollout-new"
    case rollouts
    case samplePartial = "sample-partial"
    case shadowPartial = "shadow-partial"
    case signIn = "sign-in"
    case user
    case users
    case valueFieldPartial = "value-field-partial"
    case webhooks
}
