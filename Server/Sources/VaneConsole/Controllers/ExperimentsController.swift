import ExperimentStatistics
import Foundation
import Hummingbird
import VaneCore
import VaneServerCore

/// An environment's experiments: the list, and each one's results with its health checks and a
/// chart per metric; people who may publish create them with a form, and start and stop them
/// after a confirmation, through the same ``ExperimentLifecycle`` as the API (or a change request
/// where a policy is in force). Results are ``ExperimentReport``'s, the same as `GET …/results`
/// and `vane experiments results`.
struct ExperimentsController: EnvironmentPages {
    let store: ConfigStore
    let drafts: DraftStore
    let experiments: ExperimentStore
    let experimentLifecycle: ExperimentLifecycle
    let requests: ChangeRequestStore
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.environment.get("experiments", use: experimentsPage)
        routes.environmentEditor.get("experiments/new", use: newExperimentPage)
        routes.environmentEditor.post("experiments", use: createExperiment)
        routes.environment.get("experiments/:experiment", use: experimentPage)
        routes.environmentEditor.get("experiments/:experiment/start", use: confirmStart)
        routes.environmentEditor.get("experiments/:experiment/stop", use: confirmStop)
        routes.environmentEditor.post("experiments/:experiment/start", use: startExperiment)
        routes.environmentEditor.post("experiments/:experiment/stop", use: stopExperiment)
    }

    struct ExperimentsPage: Sendable {
        struct Row: Sendable {
            var key: String
            var href: String
            var status: String
            var statusClass: String
            var hypothesis: String
            var started: String?
            var parameters: String
        }

        var rows: [Row]
        /// Mustache reads stored properties only.
        var hasRows: Bool
        var createCommand: String
        /// The form's address, for people who may create experiments here.
        var newHref: String?
    }

    struct ExperimentPage: Sendable {
        struct VariantRow: Sendable {
            var name: String
            var condition: String
            var share: String
            var exposedUnits: String
            var isControl: Bool
        }

        struct MetricRow: Sendable {
            var variant: String
            var units: String
            var converted: String?
            var estimate: String
            /// The variant's own interval at the experiment's level ("9.43 % to 10.61 %").
            var estimateInterval: String
            var difference: String
            var interval: String
            var relative: String
            var relativeInterval: String
            var decision: String
            /// Bayesian: the expected loss of shipping this treatment instead of control.
            var expectedLoss: String
            var isControl: Bool
        }

        struct MetricSection: Sendable {
            var id: String
            var title: String
            var role: String
            var measure: String
            var hasConverted: Bool
            var decisionHeading: String
            /// "95 % interval", at the experiment's level.
            var intervalHeading: String
            var rows: [MetricRow]
            /// Bayesian reading: the table has the expected loss column.
            var showsLoss: Bool
            var chart: String?
            var chartCaption: String
            /// How many units the observed differences need, and how long that takes at the
            /// current pace (the primary metric only).
            var planning: [String]
            var hasPlanning: Bool
        }

        var key: String
        var status: String
        var statusClass: String
        var hypothesis: String
        var method: String
        /// The confidence level and the sample-ratio threshold.
        var settings: String
        var parameters: String
        var started: String?
        var startVersion: String?
        var stopped: String?
        var warnings: [String]
        var healthy: Bool
        /// No unit exposed yet: nothing to check or read.
        var noData: String?
        /// Under a sample-ratio mismatch: why no figure below can be trusted (and they are dimmed).
        var untrusted: String?
        var sampleRatio: String?
        var severalVariants: Int
        var exposuresWithoutFetch: Int
        var notice: String?
        var variants: [VariantRow]
        var metrics: [MetricSection]
        /// The confirmation pages of start and stop, for people who may change the experiment.
        var startHref: String?
        var stopHref: String?
        var csrf: String
        var error: String?
        var listHref: String
    }

    // MARK: The list

    @Sendable func experimentsPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let base = ConsolePaths.environment(key) + "/experiments/"
        let rows = try await experiments.experiments(key).map { experiment in
            ExperimentsPage.Row(
                key: experiment.key,
                href: base + ConsolePaths.encode(experiment.key),
                status: experiment.status.rawValue,
                statusClass: Self.statusClass(experiment.status),
                hypothesis: experiment.definition.hypothesis,
                started: experiment.startTime.map(Self.displayTime),
                parameters: experiment.definition.parameters.joined(separator: ", ")
            )
        }
        return renderer.render(
            .experiments,
            chrome: try await environmentChrome(
                title: "Experiments",
                user: user,
                project: project,
                environment: environment,
                tab: "experiments"
            ),
            page: ExperimentsPage(
                rows: rows,
                hasRows: !rows.isEmpty,
                createCommand:
                    "vane experiments create experiment.json --project \(key.projectId) --environment \(key.environmentId)",
                newHref: principal.permits(.publish(key)) ? base + "new" : nil
            ),
            context: context
        )
    }

    // MARK: One experiment

    @Sendable func experimentPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let done = ConsoleForm.query(request)["done"]
        let flash: ConsoleChrome.Flash? =
            switch done {
            case "created": .ok("Created as a draft: check it below, then start it.")
            case "started": .ok("Started: exposures and events count from now on.")
            case "stopped": .ok("Stopped: nothing more counts; the results stay.")
            default: nil
            }
        return try await renderExperiment(request, context: context, flash: flash, error: nil)
    }

    func renderExperiment(
        _ request: Request,
        context: VaneRequestContext,
        flash: ConsoleChrome.Flash?,
        error: String?
    ) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let name = context.parameters.get("experiment") ?? ""
        guard let (experiment, stored) = try await experiments.experimentWithTally(key, key: name) else {
            throw ConsolePageError.notFound("there is no experiment \"\(name)\" in \(key)")
        }
        let report = ExperimentReport(experiment, tally: stored.tally, history: stored.history)
        let path = ConsolePaths.environment(key) + "/experiments/" + ConsolePaths.encode(experiment.key)
        let canChange = principal.permits(.publish(key))
        var chrome = try await environmentChrome(
            title: "Experiment \(experiment.key)",
            user: user,
            project: project,
            environment: environment,
            tab: "experiments"
        )
        chrome.flash = flash
        return renderer.render(
            .experiment,
            chrome: chrome,
            page: Self.experimentPage(
                report,
                startHref: canChange && experiment.status == .draft ? path + "/start" : nil,
                stopHref: canChange && experiment.status == .running ? path + "/stop" : nil,
                csrf: session.csrfToken,
                error: error,
                listHref: ConsolePaths.environment(key) + "/experiments"
            ),
            context: context,
            status: error == nil ? .ok : .conflict
        )
    }

    @Sendable func startExperiment(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeExperiment(request, context: context, change: .start) { environment, name, actor in
            _ = try await experimentLifecycle.start(environment, key: name, actor: actor)
        }
    }

    @Sendable func stopExperiment(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await changeExperiment(request, context: context, change: .stop) { environment, name, actor in
            _ = try await experimentLifecycle.stop(environment, key: name, actor: actor)
        }
    }

    /// A confirmed start or stop: back to the experiment's page with what happened, or the page
    /// again with why not; under a policy, a change request instead, and its page.
    private func changeExperiment(
        _ request: Request,
        context: VaneRequestContext,
        change: Change,
        _ apply: (EnvironmentKey, String, Actor) async throws -> Void
    ) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let (key, _, _) = try await self.environment(context)
        _ = try await ConsoleForm.read(request, context: context)
        let name = context.parameters.get("experiment") ?? ""
        let done = change == .start ? "started" : "stopped"
        if try await requests.policy(key).policy.inForce {
            try await requestChange(change, key: key, name: name, principal: principal)
        }
        do {
            try await apply(key, name, principal.actor)
        } catch let refusal as ExperimentStartRefusal {
            return try await renderExperiment(request, context: context, flash: nil, error: refusal.description)
        } catch let error as StorageError {
            return try await renderExperiment(request, context: context, flash: nil, error: error.description)
        } catch let refusal as ChangeRefusal {
            return try await renderExperiment(request, context: context, flash: nil, error: refusal.description)
        }
        throw ConsoleRedirect(
            location: ConsolePaths.environment(key) + "/experiments/" + ConsolePaths.encode(name) + "?done=" + done
        )
    }

    static func statusClass(_ status: ExperimentStatus) -> String {
        switch status {
        case .draft: "tag"
        case .running: "tag tag-added"
        case .stopped: "tag tag-changed"
        }
    }

    /// The page's figures, formatted; pure, for tests.
    static func experimentPage(
        _ report: ExperimentReport,
        startHref: String?,
        stopHref: String?,
        csrf: String,
        error: String?,
        listHref: String,
        now: Int64 = Clock.nowMilliseconds()
    ) -> ExperimentPage {
        let experiment = report.experiment
        let definition = report.definition
        let totalWeight = definition.variants.map(\.weight).reduce(0, +)
        let exposed = Dictionary(report.aggregates.variants.map { ($0.name, $0.exposedUnits) }) { first, _ in first }
        let variants = definition.variants.map { variant in
            ExperimentPage.VariantRow(
                name: variant.name,
                condition: variant.condition ?? "(none: the default values)",
                share: totalWeight > 0
                    ? ExperimentChart.share(variant.weight / totalWeight)
                    : "–",
                exposedUnits: count(exposed[variant.name] ?? 0),
                isControl: variant.name == definition.controlVariant
            )
        }
        var sampleRatio: String?
        if let mismatch = report.sampleRatioMismatch {
            sampleRatio =
                "χ² \(String(format: "%.2f", mismatch.chiSquare)), p \(ExperimentReport.pValueText(mismatch.pValue)) "
                + (mismatch.isMismatch ? "— flagged (below \(mismatch.threshold))" : "— fits the configured split")
        }
        let metrics = definition.metrics.enumerated().compactMap { index, metric -> ExperimentPage.MetricSection? in
            metricSection(report, metric: metric, index: index, now: now)
        }
        let exposedUnits = report.aggregates.variants.map(\.exposedUnits).reduce(0, +)
        let noData: String? =
            exposedUnits > 0
            ? nil
            : experiment.status == .draft
                ? "No data yet: the experiment has not started, so there is nothing to check."
                : "No data yet: no unit has been exposed since the start, so there is nothing to check. Apps report "
                    + "exposures once they fetch the variants' values."
        let untrusted: String? =
            report.sampleRatioMismatch?.isMismatch == true
            ? "These results cannot be trusted: the exposed units do not split as configured (sample-ratio mismatch), "
                + "so the variants' units differ in more than the change tested. Find the cause (see the health checks) "
                + "before reading any figure below."
            : nil
        return ExperimentPage(
            key: experiment.key,
            status: experiment.status.rawValue,
            statusClass: statusClass(experiment.status),
            hypothesis: definition.hypothesis,
            method: definition.method == .sequential
                ? "Sequential (always-valid p-values and intervals: safe to look at daily)"
                : "Bayesian (chance to beat control, expected loss)",
            settings: "\(ExperimentReport.levelText(definition.confidenceLevel)) confidence; the sample-ratio check "
                + "flags p below \(definition.sampleRatioThreshold)",
            parameters: definition.parameters.joined(separator: ", "),
            started: experiment.startTime.map(displayTime),
            startVersion: experiment.startVersion.map(String.init),
            stopped: experiment.stopTime.map(displayTime),
            warnings: report.warnings,
            healthy: report.warnings.isEmpty && exposedUnits > 0,
            noData: noData,
            untrusted: untrusted,
            sampleRatio: sampleRatio,
            severalVariants: report.unitsInSeveralVariants,
            exposuresWithoutFetch: report.exposuresWithoutFetch,
            notice: report.notice,
            variants: variants,
            metrics: metrics,
            startHref: startHref,
            stopHref: stopHref,
            csrf: csrf,
            error: error,
            listHref: listHref
        )
    }

    /// A metric's deciding measure: a table and the chart of each treatment against control.
    static func metricSection(
        _ report: ExperimentReport,
        metric: ExperimentMetric,
        index: Int,
        now: Int64
    ) -> ExperimentPage.MetricSection? {
        guard let results = report.measures(of: metric).first else { return nil }
        let sequential = report.definition.method == .sequential
        let scale: ExperimentChart.Scale =
            switch results.measure {
            case .conversionRate: .percentagePoints
            case .meanPerUnit: .number(decimals: 2)
            case .ratio: .number(decimals: 4)
            }
        let comparisons = Dictionary(results.comparisons.map { ($0.variant, $0) }) { first, _ in first }
        // The interval of the method's own test, so it agrees with the p-value beside it: the
        // always-valid confidence sequence over every look, or the fixed-horizon interval for
        // Bayesian reading.
        func interval(_ comparison: TreatmentComparison) -> Interval {
            sequential ? comparison.alwaysValid.absoluteInterval : comparison.fixedHorizon.absoluteInterval
        }
        func relativeInterval(_ comparison: TreatmentComparison) -> Interval? {
            sequential ? comparison.alwaysValid.relativeInterval : comparison.fixedHorizon.relativeInterval
        }
        let level = ExperimentReport.levelText(report.definition.confidenceLevel)
        let rows = results.variants.map { variant -> ExperimentPage.MetricRow in
            let isControl = variant.variant == report.definition.controlVariant
            var row = ExperimentPage.MetricRow(
                variant: variant.variant,
                units: count(variant.exposedUnits),
                converted: variant.convertedUnits.map(count),
                estimate: variant.estimate.map { estimate(results.measure, $0.value) } ?? "–",
                estimateInterval: variant.interval.map {
                    "\(estimate(results.measure, $0.lower)) to \(estimate(results.measure, $0.upper))"
                } ?? "",
                difference: isControl ? "(control)" : "–",
                interval: "",
                relative: "",
                relativeInterval: "",
                decision: "",
                expectedLoss: "",
                isControl: isControl
            )
            if !isControl, let comparison = comparisons[variant.variant] {
                row.difference = scale.format(comparison.difference.absolute.value)
                let bounds = interval(comparison)
                row.interval = "\(scale.format(bounds.lower)) to \(scale.format(bounds.upper))"
                row.relative = comparison.difference.relative.map { ExperimentChart.percent($0.value) } ?? "–"
                if comparison.difference.relative != nil, let relative = relativeInterval(comparison) {
                    row.relativeInterval =
                        "\(ExperimentChart.percent(relative.lower)) to \(ExperimentChart.percent(relative.upper))"
                }
                row.decision =
                    sequential
                    ? "p \(ExperimentReport.pValueText(comparison.alwaysValid.pValue))"
                    : ExperimentChart.share(comparison.bayesian.chanceToBeatControl)
                row.expectedLoss = lossText(comparison.bayesian.expectedLossOfTreatment, scale: scale)
            }
            return row
        }
        let chartRows = results.comparisons.map { comparison in
            let bounds = interval(comparison)
            return ExperimentChart.Row(
                label: comparison.variant,
                estimate: comparison.difference.absolute.value,
                lower: bounds.lower,
                upper: bounds.upper
            )
        }
        let id = "metric-\(index)"
        let measure = measureName(results.measure)
        let planning = index == 0 ? Self.planning(report, results: results, scale: scale, now: now) : []
        return ExperimentPage.MetricSection(
            id: id,
            title: metric.name,
            role: index == 0 ? "primary" : "guardrail",
            measure: measure,
            hasConverted: results.variants.contains { $0.convertedUnits != nil },
            decisionHeading: sequential ? "p-value (always valid)" : "Chance to beat control",
            intervalHeading: "\(level) interval",
            rows: rows,
            showsLoss: !sequential,
            chart: ExperimentChart.responsive(
                rows: chartRows,
                scale: scale,
                id: id + "-chart",
                title: "\(metric.name): difference in \(measure) from control, with \(level) intervals"
            ),
            chartCaption:
                "Difference in \(measure) from control"
                + (results.measure == .conversionRate ? " in percentage points" : "")
                + "; the line is the \(level) "
                + (sequential ? "always-valid interval, safe to read at any time" : "interval")
                + ". An interval clear of zero is a real difference.",
            planning: planning,
            hasPlanning: !planning.isEmpty
        )
    }

    /// The expected loss in the metric's units; a loss below the scale's precision reads as about 0.
    private static func lossText(_ loss: Double, scale: ExperimentChart.Scale) -> String {
        guard loss.isFinite else { return "–" }
        let text = scale.format(loss).replacingOccurrences(of: "+", with: "")
        // Every digit 0 ("0 pp", "0.00"): below what the scale shows.
        return text.allSatisfy { !$0.isNumber || $0 == "0" } ? "≈ 0" : text
    }

    /// Per treatment: the units per variant a fixed-horizon test needs to detect the observed
    /// difference with 80 % power at the experiment's level (``SampleSizeEstimate``), and the days
    /// that takes at the pace units arrived so far; with no difference yet, the smallest one the
    /// units so far detect.
    static func planning(
        _ report: ExperimentReport,
        results: MeasureResults,
        scale: ExperimentChart.Scale,
        now: Int64
    ) -> [String] {
        let definition = report.definition
        guard let control = results.variants.first(where: { $0.variant == definition.controlVariant }),
            let controlVariance = control.unitVariance, control.exposedUnits > 0
        else { return [] }
        let power = "\(Int((SampleSizeEstimate.defaultPower * 100).rounded())) %"
        let level = ExperimentReport.levelText(definition.confidenceLevel)
        let elapsedDays = report.experiment.startTime.map { start in
            Double((report.experiment.stopTime ?? now) - start) / 86_400_000
        }
        let treatments = Dictionary(results.variants.map { ($0.variant, $0) }) { first, _ in first }
        return results.comparisons.compactMap { comparison -> String? in
            guard let treatment = treatments[comparison.variant], let treatmentVariance = treatment.unitVariance,
                treatment.exposedUnits > 0
            else { return nil }
            let have = min(control.exposedUnits, treatment.exposedUnits)
            let observed = comparison.difference.absolute.value
            guard
                let needed = SampleSizeEstimate.unitsPerVariant(
                    difference: observed,
                    controlVariance: controlVariance,
                    treatmentVariance: treatmentVariance,
                    confidenceLevel: definition.confidenceLevel
                ), needed.isFinite, needed < 1e12
            else {
                guard
                    let smallest = SampleSizeEstimate.minimumDetectableDifference(
                        unitsPerVariant: Double(have),
                        controlVariance: controlVariance,
                        treatmentVariance: treatmentVariance,
                        confidenceLevel: definition.confidenceLevel
                    )
                else { return nil }
                return "\(comparison.variant): no difference seen yet; the \(count(have)) units per variant so far "
                    + "detect a difference of \(scale.format(smallest).replacingOccurrences(of: "+", with: "±")) with "
                    + "\(power) power at \(level)."
            }
            let units = Int(needed.rounded(.up))
            let target =
                "\(comparison.variant): detecting the observed difference (\(scale.format(observed))) with \(power) power "
                + "at \(level) takes about \(count(units)) units per variant"
            if have >= units {
                return target + "; the \(count(have)) so far are enough for a fixed-horizon test (the sequential "
                    + "reading needs more to be sure)."
            }
            guard let elapsedDays, elapsedDays > 0 else { return target + "." }
            let perDay = Double(have) / elapsedDays
            guard perDay > 0 else { return target + "." }
            let days = (Double(units - have) / perDay).rounded(.up)
            return target + "; at the current \(count(Int(perDay.rounded()))) units per variant a day, about "
                + (days <= 1 ? "1 more day." : "\(count(Int(days))) more days.")
        }
    }

    private static func measureName(_ measure: Measure) -> String {
        switch measure {
        case .conversionRate: "conversion rate"
        case .meanPerUnit: "mean per unit"
        case .ratio: "ratio"
        }
    }

    private static func estimate(_ measure: Measure, _ value: Double) -> String {
        guard value.isFinite else { return "–" }
        switch measure {
        case .conversionRate: return String(format: "%.2f %%", value * 100)
        case .meanPerUnit: return String(format: "%.2f", value)
        case .ratio: return String(format: "%.4f", value)
        }
    }

    /// `12,345`.
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return result
    }
}
