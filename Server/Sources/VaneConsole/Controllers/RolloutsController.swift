import ExperimentStatistics
import Foundation
import Hummingbird
import VaneCore
import VaneServerCore

/// An environment's progressive rollouts (docs/ROLLOUTS.md): the list, and each one's page — the
/// plan, the current step on a timeline, each guardrail's reading drawn by ``GuardrailChart``, the
/// decisions made and why. People who may publish pause, resume, stop and roll back here, and
/// start drafts, through the same ``RolloutLifecycle`` calls as the API; a start under a change
/// policy opens a `rollout_start` change request instead. Creating a plan is
/// `RolloutsController+Create.swift`.
struct RolloutsController: EnvironmentPages {
    let store: ConfigStore
    let drafts: DraftStore
    let lifecycle: RolloutLifecycle
    let requests: ChangeRequestStore
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("rollouts", use: rolloutsPage)
        routes.environmentEditor.get("rollouts/new", use: newRolloutPage)
        routes.environmentEditor.post("rollouts/new", use: createRollout)
        routes.environment.get("rollouts/:rollout", use: rolloutPage)
        routes.environmentEditor.post("rollouts/:rollout/start", use: startRollout)
        routes.environmentEditor.post("rollouts/:rollout/request", use: requestStart)
        routes.environmentEditor.post("rollouts/:rollout/pause", use: pauseRollout)
        routes.environmentEditor.post("rollouts/:rollout/resume", use: resumeRollout)
        routes.environmentEditor.get("rollouts/:rollout/stop", use: confirmStop)
        routes.environmentEditor.post("rollouts/:rollout/stop", use: stopRollout)
        routes.environmentEditor.get("rollouts/:rollout/rollback", use: confirmRollBack)
        routes.environmentEditor.post("rollouts/:rollout/rollback", use: rollBackRollout)
    }

    // MARK: The list

    struct RolloutsPage: Sendable {
        struct Row: Sendable {
            var id: String
            var href: String
            var state: String
            var stateClass: String
            var position: String
            var parameters: String
            var description: String
            var created: String
        }

        var rows: [Row]
        /// Mustache reads stored properties only.
        var hasRows: Bool
        var newHref: String?
    }

    @Sendable func rolloutsPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let rows = try await lifecycle.rollouts.rollouts(key).map { rollout in
            RolloutsPage.Row(
                id: rollout.id,
                href: Self.path(key, rollout.id),
                state: Self.stateLabel(rollout.state),
                stateClass: Self.stateClass(rollout.state),
                position: Self.position(rollout),
                parameters: rollout.plan.parameters.map(\.key).joined(separator: ", "),
                description: rollout.plan.description,
                created: Self.displayTime(rollout.createTime)
            )
        }
        return renderer.render(
            .rollouts,
            chrome: try await environmentChrome(
                title: "Rollouts",
                user: user,
                project: project,
                environment: environment,
                tab: "rollouts"
            ),
            page: RolloutsPage(
                rows: rows,
                hasRows: !rows.isEmpty,
                newHref: principal.permits(.publish(key)) ? ConsolePaths.environment(key) + "/rollouts/new" : nil
            ),
            context: context
        )
    }

    // MARK: One rollout

    struct RolloutPage: Sendable {
        struct ParameterRow: Sendable {
            var key: String
            var value: String
            var editHref: String
        }

        struct Step: Sendable {
            var number: Int
            var percent: String
            /// `done`, `current` or `next`, for the timeline's class and its words.
            var status: String
            var statusText: String
            var isCurrent: Bool
        }

        struct Guardrail: Sendable {
            var id: String
            var event: String
            var kind: String
            var bad: String
            var margin: String
            var treatment: String
            var comparison: String
            var difference: String
            var interval: String
            var verdict: String
            var worse: Bool
            var chart: String?
            var chartCaption: String
        }

        struct Decision: Sendable {
            var time: String
            var step: String
            var action: String
            var actor: String
            var reason: String
        }

        var id: String
        var description: String
        var state: String
        var stateClass: String
        var position: String
        var parameters: [ParameterRow]
        var audience: String
        var hold: String
        var units: String
        var onRegression: String
        var onMissingData: String
        var errorRate: String
        var created: String
        var stepStarted: String?
        var steps: [Step]
        /// What the guard reads now, in its words; nil while no step runs.
        var reading: String?
        var readingWorse: Bool
        var arms: String?
        var sampleRatio: String?
        var guardrails: [Guardrail]
        var decisions: [Decision]
        var hasDecisions: Bool
        var startAction: String?
        var requestAction: String?
        var requestTitle: String
        var pauseAction: String?
        var resumeAction: String?
        var stopHref: String?
        var rollBackHref: String?
        var csrf: String
        var error: String?
        var listHref: String
    }

    @Sendable func rolloutPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let flash: ConsoleChrome.Flash? =
            switch ConsoleForm.query(request)["done"] {
            case "created": .ok("Created as a draft: read the plan, then start it.")
            case "started": .ok("Started: the first step is published.")
            case "paused": .ok("Paused: the current step stays published and the guard decides nothing.")
            case "resumed": .ok("Resumed: the guard decides again.")
            case "stopped": .ok("Stopped where it stood: the current share keeps the new value.")
            case "rolled_back": .ok("Rolled back: everyone gets the old value again.")
            default: nil
            }
        return try await renderRollout(context: context, flash: flash, error: nil)
    }

    func renderRollout(
        context: VaneRequestContext,
        flash: ConsoleChrome.Flash?,
        error: String?
    ) async throws
        -> Response
    {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let id = context.parameters.get("rollout") ?? ""
        guard let reading = try await lifecycle.reading(key, id: id) else {
            throw ConsolePageError.notFound("there is no rollout \"\(id)\" in \(key)")
        }
        let rollout = reading.rollout
        let path = Self.path(key, rollout.id)
        let canChange = principal.permits(.publish(key))
        let policyInForce = try await requests.policy(key).policy.inForce
        let live = rollout.state == .running || rollout.state == .paused
        var page = Self.rolloutPage(reading, environment: key, csrf: session.csrfToken, error: error)
        if canChange {
            page.startAction = rollout.state == .draft && !policyInForce ? path + "/start" : nil
            page.requestAction = rollout.state == .draft && policyInForce ? path + "/request" : nil
            page.pauseAction = rollout.state == .running ? path + "/pause" : nil
            page.resumeAction = rollout.state == .paused ? path + "/resume" : nil
            page.stopHref = live || rollout.state == .draft ? path + "/stop" : nil
            page.rollBackHref = live ? path + "/rollback" : nil
        }
        var chrome = try await environmentChrome(
            title: "Rollout \(rollout.id)",
            user: user,
            project: project,
            environment: environment,
            tab: "rollouts"
        )
        chrome.flash = flash
        return renderer.render(
            .rollout,
            chrome: chrome,
            page: page,
            context: context,
            status: error == nil ? .ok : .conflict
        )
    }

    /// The page's figures, formatted; pure, for tests. The actions are the caller's.
    static func rolloutPage(
        _ reading: RolloutReading,
        environment: EnvironmentKey,
        csrf: String,
        error: String?
    ) -> RolloutPage {
        let rollout = reading.rollout
        let plan = rollout.plan
        let steps = plan.steps.enumerated().map { index, percent -> RolloutPage.Step in
            let status: String
            if rollout.state == .completed || index < rollout.step {
                status = "done"
            } else if index == rollout.step && rollout.state != .completed {
                status = "current"
            } else {
                status = "next"
            }
            let statusText =
                switch (status, rollout.state) {
                case ("current", .running): "now"
                case ("current", .paused): "now, paused"
                case ("current", .rolledBack): "rolled back here"
                case ("current", .stopped): "stopped here"
                case ("done", _): "done"
                default: "to come"
                }
            return RolloutPage.Step(
                number: index + 1,
                percent: RolloutPlan.percentText(percent) + " %",
                status: status,
                statusText: statusText,
                isCurrent: status == "current"
            )
        }
        let level = ExperimentReport.levelText(
            OneSidedRegression.confidenceLevel(errorRate: plan.errorRate, guardrails: plan.guardrails.count)
        )
        let figures = Dictionary((reading.assessment?.figures ?? []).map { ($0.event, $0) }) { first, _ in first }
        let guardrails = plan.guardrails.enumerated().map { index, guardrail in
            guardrailSection(guardrail, figure: figures[guardrail.event], index: index, level: level)
        }
        var sampleRatio: String?
        var arms: String?
        if let assessment = reading.assessment {
            arms =
                "\(ExperimentsController.count(assessment.treatmentUnits)) treatment and "
                + "\(ExperimentsController.count(assessment.comparisonUnits)) comparison units exposed "
                + "(\(ExperimentsController.count(plan.minimumUnitsPerArm)) per arm needed to advance)"
            if assessment.treatmentUnits + assessment.comparisonUnits > 0 {
                sampleRatio =
                    "p \(ExperimentReport.pValueText(assessment.sampleRatioPValue)) "
                    + (assessment.sampleRatioPValue < RolloutPlan.sampleRatioThreshold
                        ? "— a mismatch (below \(RolloutPlan.sampleRatioThreshold)): the rollout holds"
                        : "— fits the split")
            }
        }
        return RolloutPage(
            id: rollout.id,
            description: plan.description,
            state: stateLabel(rollout.state),
            stateClass: stateClass(rollout.state),
            position: position(rollout),
            parameters: plan.parameters.map {
                RolloutPage.ParameterRow(
                    key: $0.key,
                    value: $0.value,
                    editHref: ConsolePaths.flagEditor(environment, key: $0.key)
                )
            },
            audience: plan.audience.map { "the units of condition \($0)" } ?? "everyone",
            hold: "at least \(duration(plan.minimumHoldSeconds))",
            units: "\(ExperimentsController.count(plan.minimumUnitsPerArm)) exposed units per arm",
            onRegression: plan.onRegression == .rollBack
                ? "roll back at once (everyone gets the old value)" : "pause and tell people",
            onMissingData: "hold and tell people",
            errorRate: "\(plan.errorRate) over the whole rollout, \(level) intervals per guardrail",
            created: "\(displayTime(rollout.createTime)) by \(rollout.creator)",
            stepStarted: rollout.stepStartTime.map(displayTime),
            steps: steps,
            reading: reading.assessment.map(\.reason),
            readingWorse: reading.assessment?.verdict == .regression,
            arms: arms,
            sampleRatio: sampleRatio,
            guardrails: guardrails,
            decisions: reading.decisions.reversed().map {
                RolloutPage.Decision(
                    time: displayTime($0.time),
                    step: "\($0.step + 1) (\(RolloutPlan.percentText($0.percent)) %)",
                    action: actionLabel($0.action),
                    actor: $0.actor,
                    reason: $0.reason
                )
            },
            hasDecisions: !reading.decisions.isEmpty,
            startAction: nil,
            requestAction: nil,
            requestTitle: "Start rollout \(rollout.id)",
            pauseAction: nil,
            resumeAction: nil,
            stopHref: nil,
            rollBackHref: nil,
            csrf: csrf,
            error: error,
            listHref: ConsolePaths.environment(environment) + "/rollouts"
        )
    }

    /// A guardrail's plan and, when the step has a reading, its figures and chart.
    static func guardrailSection(
        _ guardrail: RolloutGuardrail,
        figure: RolloutAssessment.GuardrailFigure?,
        index: Int,
        level: String
    ) -> RolloutPage.Guardrail {
        let scale: ExperimentChart.Scale =
            switch guardrail.kind {
            case .conversion: .percentagePoints
            case .mean: .number(decimals: 2)
            case .ratio: .number(decimals: 4)
            }
        func value(_ number: Double?) -> String {
            guard let number, number.isFinite else { return "–" }
            switch guardrail.kind {
            case .conversion: return String(format: "%.2f %%", number * 100)
            case .mean: return String(format: "%.2f", number)
            case .ratio: return String(format: "%.4f", number)
            }
        }
        let edge = guardrail.bad == .increase ? guardrail.margin : -guardrail.margin
        let id = "guardrail-\(index)"
        var section = RolloutPage.Guardrail(
            id: id,
            event: guardrail.event,
            kind: measureName(guardrail.kind),
            bad: guardrail.bad == .increase ? "more is worse" : "less is worse",
            margin: scale.format(edge),
            treatment: value(figure?.treatment),
            comparison: value(figure?.comparison),
            difference: "–",
            interval: "–",
            verdict: "no reading yet",
            worse: figure?.worse ?? false,
            chart: nil,
            chartCaption: ""
        )
        // Both arms need exposed units before there is anything to read.
        guard let figure, let treatment = figure.treatment, let comparison = figure.comparison else { return section }
        section.verdict = figure.worse ? "significantly worse" : "not significantly worse"
        let estimate = treatment - comparison
        section.difference = scale.format(estimate)
        let interval = figure.difference ?? Interval(lower: -.infinity, upper: .infinity)
        section.interval =
            "\(boundText(interval.lower, scale)) to \(boundText(interval.upper, scale))"
        let reading = GuardrailChart.Reading(
            event: guardrail.event,
            estimate: estimate,
            lower: interval.lower,
            upper: interval.upper,
            margin: guardrail.margin,
            increaseIsBad: guardrail.bad == .increase,
            worse: figure.worse
        )
        section.chart = GuardrailChart.svg(reading, scale: scale, level: level, id: id + "-chart")
        section.chartCaption =
            "Treatment − comparison"
            + (guardrail.kind == .conversion ? " in percentage points" : "")
            + "; the line is the \(level) always-valid interval, safe to read at any time. The shaded side, "
            + "beyond the margin \(scale.format(edge)), is where the guard calls the treatment worse: only an "
            + "interval wholly inside it counts."
        return section
    }

    // MARK: Pause, resume, start

    @Sendable func pauseRollout(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeRollout(request, context: context, done: "paused") { key, id, actor in
            _ = try await lifecycle.pause(key, id: id, actor: actor)
        }
    }

    @Sendable func resumeRollout(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeRollout(request, context: context, done: "resumed") { key, id, actor in
            _ = try await lifecycle.resume(key, id: id, actor: actor)
        }
    }

    @Sendable func startRollout(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeRollout(request, context: context, done: "started") { key, id, actor in
            _ = try await lifecycle.start(key, id: id, actor: actor)
        }
    }

    /// Under a change policy a start is approved once: a `rollout_start` change request for the draft.
    @Sendable func requestStart(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let (key, _, _) = try await self.environment(context)
        let form = try await ConsoleForm.read(request, context: context)
        let id = context.parameters.get("rollout") ?? ""
        guard let rollout = try await lifecycle.rollouts.rollout(key, id: id) else {
            throw ConsolePageError.notFound("there is no rollout \"\(id)\" in \(key)")
        }
        guard rollout.state == .draft else {
            return try await renderRollout(
                context: context,
                flash: nil,
                error: StorageError.rolloutState(id: id, state: rollout.state.rawValue, action: "start").description
            )
        }
        let title = try form.required("title", label: "A title saying what the change does")
        guard title.count <= ChangeRequestsController.maximumTitleLength else {
            throw ConsolePageError.badRequest(
                "the title has at most \(ChangeRequestsController.maximumTitleLength) characters; put the rest in the description"
            )
        }
        let opened = try await requests.create(
            .rolloutStart(id),
            in: key,
            title: title,
            description: form.text("description") ?? "",
            draft: false,
            author: principal.changeActor
        )
        throw ConsoleRedirect(
            location: ConsolePaths.environment(key) + "/change-requests/\(ConsolePaths.encode(opened.id))?opened=1"
        )
    }

    // MARK: Stop and roll back, each confirmed on a page of its own

    struct ConfirmPage: Sendable {
        var heading: String
        var explanations: [String]
        var action: String
        var button: String
        var asksReason: Bool
        var csrf: String
        var back: String
    }

    @Sendable func confirmStop(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await confirm(
            context,
            heading: "Stop",
            explanations: [
                "The rollout ends where it stands: the units that get the new value now keep it, everyone else keeps "
                    + "the old one, and the guard no longer watches its guardrails.",
                "Nothing is published. To give everyone the old value again, roll it back instead.",
            ],
            action: "stop",
            button: "Stop the rollout",
            asksReason: false
        )
    }

    @Sendable func confirmRollBack(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await confirm(
            context,
            heading: "Roll back",
            explanations: [
                "This publishes the live template without the rollout's conditions and values at once: everyone "
                    + "gets the old value again, and the rollout ends.",
                "It goes to every app on its next fetch, and live within a second to apps that follow realtime keys.",
            ],
            action: "rollback",
            button: "Roll back and publish",
            asksReason: true
        )
    }

    private func confirm(
        _ context: VaneRequestContext,
        heading: String,
        explanations: [String],
        action: String,
        button: String,
        asksReason: Bool
    ) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let id = context.parameters.get("rollout") ?? ""
        guard let rollout = try await lifecycle.rollouts.rollout(key, id: id) else {
            throw ConsolePageError.notFound("there is no rollout \"\(id)\" in \(key)")
        }
        let path = Self.path(key, rollout.id)
        return renderer.render(
            .rolloutConfirm,
            chrome: try await environmentChrome(
                title: "\(heading) rollout \(rollout.id)",
                user: user,
                project: project,
                environment: environment,
                tab: "rollouts"
            ),
            page: ConfirmPage(
                heading: "\(heading) rollout \(rollout.id) at \(Self.position(rollout))?",
                explanations: explanations,
                action: path + "/" + action,
                button: button,
                asksReason: asksReason,
                csrf: session.csrfToken,
                back: path
            ),
            context: context
        )
    }

    @Sendable func stopRollout(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeRollout(request, context: context, done: "stopped") { key, id, actor in
            _ = try await lifecycle.stop(key, id: id, actor: actor)
        }
    }

    @Sendable func rollBackRollout(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeRolloutWithForm(request, context: context, done: "rolled_back") { key, id, actor, form in
            let why = (form.text("reason") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard why.count <= 500 else {
                throw ConsolePageError.badRequest("the reason has at most 500 characters")
            }
            _ = try await lifecycle.rollBack(
                key,
                id: id,
                reason: "rolled back by \(actor.name)" + (why.isEmpty ? "" : ": \(why)"),
                figures: nil,
                actor: actor
            )
        }
    }

    private func changeRollout(
        _ request: Request,
        context: VaneRequestContext,
        done: String,
        _ change: (EnvironmentKey, String, Actor) async throws -> Void
    ) async throws -> Response {
        try await changeRolloutWithForm(request, context: context, done: done) { key, id, actor, _ in
            try await change(key, id, actor)
        }
    }

    /// A change from the rollout's page: the form's token first, then the lifecycle's call; back
    /// to the page with what happened, or the page again with why not (409).
    private func changeRolloutWithForm(
        _ request: Request,
        context: VaneRequestContext,
        done: String,
        _ change: (EnvironmentKey, String, Actor, ConsoleForm) async throws -> Void
    ) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let (key, _, _) = try await self.environment(context)
        let form = try await ConsoleForm.read(request, context: context)
        let id = context.parameters.get("rollout") ?? ""
        do {
            try await change(key, id, principal.actor, form)
        } catch StorageError.rolloutNotFound {
            throw ConsolePageError.notFound("there is no rollout \"\(id)\" in \(key)")
        } catch let error as StorageError where error != .busy {
            return try await renderRollout(context: context, flash: nil, error: error.description)
        } catch let refusal as ChangeRefusal {
            return try await renderRollout(context: context, flash: nil, error: refusal.description)
        } catch let error as RolloutTemplateError {
            // The live template changed since the plan was made.
            return try await renderRollout(context: context, flash: nil, error: error.description)
        } catch let error as PublishError {
            return try await renderRollout(context: context, flash: nil, error: ConsolePublishing.message(error))
        }
        throw ConsoleRedirect(location: Self.path(key, id) + "?done=" + done)
    }

    // MARK: Words

    /// The rollout each flag is under — a draft, running or paused one, the newest when several —
    /// for the flags list and the flag editor.
    static func rolloutsByFlag(_ store: RolloutStore, _ environment: EnvironmentKey) async throws -> [String: Rollout] {
        var byFlag: [String: Rollout] = [:]
        // Newest first: the first one seen for a flag is kept.
        for rollout in try await store.rollouts(environment) where !rollout.state.isFinal {
            for parameter in rollout.plan.parameters where byFlag[parameter.key] == nil {
                byFlag[parameter.key] = rollout
            }
        }
        return byFlag
    }

    static func path(_ environment: EnvironmentKey, _ id: String) -> String {
        ConsolePaths.environment(environment) + "/rollouts/" + ConsolePaths.encode(id)
    }

    static func stateLabel(_ state: RolloutState) -> String {
        state == .rolledBack ? "rolled back" : state.rawValue
    }

    static func stateClass(_ state: RolloutState) -> String {
        switch state {
        case .draft, .stopped: "tag"
        case .running, .completed: "tag tag-added"
        case .paused: "tag tag-changed"
        case .rolledBack: "tag tag-removed"
        }
    }

    /// Where a rollout stands, in words: "step 2 of 6, 5 %".
    static func position(_ rollout: Rollout) -> String {
        let count = rollout.plan.steps.count
        guard rollout.step >= 0 else { return "not started (\(count) steps)" }
        return "step \(rollout.step + 1) of \(count), \(RolloutPlan.percentText(rollout.percent)) %"
    }

    static func actionLabel(_ action: RolloutDecision.Action) -> String {
        switch action {
        case .start: "started"
        case .advance: "advanced"
        case .complete: "completed"
        case .hold: "held"
        case .pause: "paused"
        case .resume: "resumed"
        case .stop: "stopped"
        case .rollBack: "rolled back"
        }
    }

    /// `1 h`, `1 h 30 min`, `90 s`, `2 d`.
    static func duration(_ seconds: Int64) -> String {
        if seconds == 0 { return "0 s" }
        if seconds % 60 != 0 || seconds < 60 { return "\(seconds) s" }
        let minutes = seconds / 60
        if minutes < 60 { return "\(minutes) min" }
        let hours = minutes / 60
        let rest = minutes % 60
        if rest == 0, hours % 24 == 0 { return "\(hours / 24) d" }
        return rest == 0 ? "\(hours) h" : "\(hours) h \(rest) min"
    }

    private static func measureName(_ kind: ExperimentMetric.Kind) -> String {
        switch kind {
        case .conversion: "share of units with the event"
        case .mean: "mean value per unit"
        case .ratio: "ratio of sums"
        }
    }

    private static func boundText(_ value: Double, _ scale: ExperimentChart.Scale) -> String {
        value.isFinite ? scale.format(value) : (value > 0 ? "unbounded above" : "unbounded below")
    }
}
