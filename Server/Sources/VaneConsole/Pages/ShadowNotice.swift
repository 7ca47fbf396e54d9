import VaneAuthoring
import VaneServerCore

/// A shadowed value as the flag editor and the review show it: the sentence, and the form that
/// moves its condition above the one that shadows it (the conditions page's move route, into the
/// person's draft).
struct ShadowNotice: Sendable {
    var message: String
    var condition: String
    var above: String
    var action: String
    /// `review` or `flag`: where the move sends the person back to.
    var returnTo: String
    var flag: String
    var buttonLabel: String

    /// One notice per finding, for an environment's pages.
    static func notices(
        _ findings: [ShadowedValue],
        key: EnvironmentKey,
        returnTo: String
    ) -> [ShadowNotice] {
        let base = ConsolePaths.environment(key) + "/conditions"
        return findings.map {
            ShadowNotice(
                message: $0.message,
                condition: $0.condition,
                above: $0.shadowedBy,
                action: "\(base)/\(ConsolePaths.encode($0.condition))/move",
                returnTo: returnTo,
                flag: $0.parameterKey,
                buttonLabel: "Move \($0.condition) above \($0.shadowedBy)"
            )
        }
    }
}
