import VaneServerCore

/// An environment's change policy in words, on the pages where it decides what a person can do
/// (the draft review, the change requests and each request's review), so people see why.
struct ChangePolicyView: Sendable {
    /// Whether changes need approved change requests.
    var inForce: Bool
    /// One sentence: what the policy asks for.
    var summary: String
    /// Who may approve, self-approval, the kill switch.
    var details: [String]

    init(_ policy: ChangePolicy) {
        inForce = policy.inForce
        guard policy.inForce else {
            summary = "No change policy: publishing here applies at once."
            details = []
            return
        }
        let needed = ChangeApproval.required(policy)
        summary =
            "Changes here go live only through approved change requests: \(needed) approval\(needed == 1 ? "" : "s") each."
        details = [
            policy.selfApproval
                ? "Authors may approve their own requests."
                : "Authors may not approve their own requests; another person approves.",
            policy.approvers.isEmpty
                ? "Anyone who may publish here may approve."
                : "Who may approve: \(policy.approvers.joined(separator: ", ")).",
            policy.killSwitchPreApproved
                ? "The kill switch is pre-approved: it applies at once."
                : "The kill switch also needs an approved request.",
        ]
    }
}
