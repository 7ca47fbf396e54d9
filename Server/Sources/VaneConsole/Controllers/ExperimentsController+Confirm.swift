import Hummingbird
import VaneCore
import VaneServerCore

/// Start and stop ask first, on a page of their own (no script needed): what the change does, what
/// cannot be undone, and, where the environment changes only through approved change requests,
/// that confirming opens one (as `POST …/change-requests` with `experiment_start` or
/// `experiment_stop` does) instead of changing the experiment.
extension ExperimentsController {
    struct ConfirmPage: Sendable {
        var key: String
        var heading: String
        var consequences: [String]
        var irreversible: String
        var approval: String?
        var action: String
        var button: String
        var buttonClass: String
        var csrf: String
        var cancelHref: String
    }

    enum Change: String, Sendable {
        case start, stop
    }

    @Sendable func confirmStart(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await confirm(.start, context: context)
    }

    @Sendable func confirmStop(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await confirm(.stop, context: context)
    }

    private func confirm(_ change: Change, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let name = context.parameters.get("experiment") ?? ""
        guard let experiment = try await experiments.experiment(key, key: name) else {
            throw ConsolePageError.notFound("there is no experiment \"\(name)\" in \(key)")
        }
        let path = ConsolePaths.environment(key) + "/experiments/" + ConsolePaths.encode(experiment.key)
        // Only a draft starts and only a running experiment stops: anything else is the page.
        let expected: ExperimentStatus = change == .start ? .draft : .running
        guard experiment.status == expected else { throw ConsoleRedirect(location: path) }
        let policy = try await requests.policy(key).policy
        let approval =
            policy.inForce
            ? "\(key.environmentId) changes only through approved change requests: confirming opens a change request "
                + "to \(change.rawValue) \(experiment.key) (\(policy.approvalsRequired) approval(s)); it "
                + (change == .start ? "starts" : "stops") + " when the request is approved and applied."
            : nil
        let page =
            switch change {
            case .start:
                ConfirmPage(
                    key: experiment.key,
                    heading: "Start \(experiment.key)?",
                    consequences: [
                        "Apps learn at their next fetch which variant their value is and report exposures; exposures and "
                            + "metric events count from the start on.",
                        "It tests \(experiment.definition.parameters.joined(separator: ", ")): no other experiment can test these while it runs.",
                    ],
                    irreversible: "The definition (variants, split, metrics, method) cannot change after the start: to "
                        + "test something else, stop it and create another experiment.",
                    approval: approval,
                    action: path + "/start",
                    button: policy.inForce ? "Request the start" : "Start the experiment",
                    buttonClass: "primary",
                    csrf: session.csrfToken,
                    cancelHref: path
                )
            case .stop:
                ConfirmPage(
                    key: experiment.key,
                    heading: "Stop \(experiment.key) for good?",
                    consequences: [
                        "Nothing more counts: exposures and metric events after the stop are not counted. The results "
                            + "stay readable.",
                        "Values do not change: the template's split stays until a publish changes it. Apps stop "
                            + "reporting exposures at their next fetch.",
                    ],
                    irreversible: "This cannot be undone: a stopped experiment does not start again. To test again, "
                        + "create a new experiment.",
                    approval: approval,
                    action: path + "/stop",
                    button: policy.inForce ? "Request the stop" : "Stop the experiment for good",
                    buttonClass: "danger",
                    csrf: session.csrfToken,
                    cancelHref: path
                )
            }
        return renderer.render(
            .experimentConfirm,
            chrome: try await environmentChrome(
                title: page.heading,
                user: user,
                project: project,
                environment: environment,
                tab: "experiments"
            ),
            page: page,
            context: context
        )
    }

    /// Opens the change request that starts or stops an experiment under a policy; its page next.
    func requestChange(_ change: Change, key: EnvironmentKey, name: String, principal: Principal) async throws -> Never
    {
        guard try await experiments.experiment(key, key: name) != nil else {
            throw ConsolePageError.notFound("there is no experiment \"\(name)\" in \(key)")
        }
        let opened = try await requests.create(
            change == .start ? .experimentStart(name) : .experimentStop(name),
            in: key,
            title: change == .start ? "Start the experiment \(name)" : "Stop the experiment \(name)",
            description: "",
            draft: false,
            author: principal.changeActor
        )
        throw ConsoleRedirect(
            location: ConsolePaths.environment(key) + "/change-requests/\(ConsolePaths.encode(opened.id))?opened=1"
        )
    }
}
