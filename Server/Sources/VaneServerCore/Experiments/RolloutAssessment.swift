package import ExperimentStatistics
package import VaneCore

/// What the guard decides about a running step, and the figures it decided on: the pure rule
/// of docs/ROLLOUTS.md, "What the guard decides".
///
/// Each guardrail is read one-sided from its step experiment's running always-valid interval of
/// treatment − comparison, kept at level 1 − α/g (α the plan's error rate, g its guardrails): the
/// treatment is worse by more than the margin when the interval's lower end is above the margin
/// (bad = increase) or its upper end below −margin (bad = decrease). The interval covers the true
/// difference at every look with probability 1 − α/g, so each guardrail wrongly flags at most α/g
/// of the time however often it is read, and the rollout at most α (Bonferroni).
package struct RolloutAssessment: Sendable, Hashable {
    package enum Verdict: String, Sendable, Hashable {
        /// Everything holds: the next step.
        case advance
        /// Not yet: hold time, units, or nothing to go on.
        case wait
        /// Something is wrong with the data (sample-ratio mismatch, no exposures): hold and tell people.
        case hold
        /// A guardrail is significantly worse.
        case regression
    }

    /// One guardrail's figures at this look.
    package struct GuardrailFigure: Sendable, Hashable {
        package var event: String
        package var treatment: Double?
        package var comparison: Double?
        /// The running always-valid interval of treatment − comparison; nil before an informative look.
        package var difference: Interval?
        package var margin: Double
        package var bad: RolloutGuardrail.Direction
        package var worse: Bool
    }

    package var verdict: Verdict
    /// Why, in a sentence people read.
    package var reason: String
    package var figures: [GuardrailFigure]
    package var treatmentUnits: Int
    package var comparisonUnits: Int
    package var sampleRatioPValue: Double
    /// The step experiment's health warnings about assignment and exposure (units in several
    /// arms, exposures of a version no app fetched); any of them holds the step.
    package var healthWarnings: [String] = []

    /// The assessment of step `step` of `plan`, begun at `stepStart`, at `now`, from the step
    /// experiment's sums, running readings and health checks.
    package static func assess(
        _ plan: RolloutPlan,
        step: Int,
        stepStart: Int64,
        now: Int64,
        aggregates: ExperimentAggregates,
        history: AlwaysValidHistory,
        health: ExperimentHealth
    ) -> RolloutAssessment {
        let treatment = aggregates.variants.first { $0.name == RolloutPlan.treatmentArm }
        let comparison = aggregates.variants.first { $0.name == RolloutPlan.comparisonArm }
        let treatmentUnits = treatment?.exposedUnits ?? 0
        let comparisonUnits = comparison?.exposedUnits ?? 0
        let ratio = health.sampleRatioMismatch
        var figures: [GuardrailFigure] = []
        for guardrail in plan.guardrails {
            let interval = history.sequence(
                metric: guardrail.name,
                measure: guardrail.measure,
                variant: RolloutPlan.treatmentArm
            )?
            .absoluteInterval
            let worse =
                interval.map {
                    OneSidedRegression.isWorse($0, margin: guardrail.margin, increaseIsBad: guardrail.bad == .increase)
                } ?? false
            figures.append(
                GuardrailFigure(
                    event: guardrail.name,
                    treatment: estimate(treatment, guardrail),
                    comparison: estimate(comparison, guardrail),
                    difference: interval,
                    margin: guardrail.margin,
                    bad: guardrail.bad,
                    worse: worse
                )
            )
        }
        var result = RolloutAssessment(
            verdict: .wait,
            reason: "",
            figures: figures,
            treatmentUnits: treatmentUnits,
            comparisonUnits: comparisonUnits,
            sampleRatioPValue: ratio?.pValue ?? 1,
            healthWarnings: health.assignmentWarnings
        )
        let percent = RolloutPlan.percentText(plan.steps[step])
        if let worse = figures.first(where: \.worse) {
            result.verdict = .regression
            result.reason =
                "guardrail \(worse.event) is worse in the treatment by more than its margin \(worse.margin): "
                + "treatment − comparison is in [\(worse.difference?.lower ?? 0), \(worse.difference?.upper ?? 0)] "
                + "at \(percent) %"
            return result
        }
        if let ratio, ratio.isMismatch {
            result.verdict = .hold
            result.reason =
                "sample-ratio mismatch: \(treatmentUnits) treatment and \(comparisonUnits) comparison units "
                + "where the split expects them equal (p = \(ratio.pValue) < \(RolloutPlan.sampleRatioThreshold)); "
                + "exposures are lost or assigned wrongly, so the guardrails cannot be trusted. The rollout stays at "
                + "\(percent) % while the split does not fit; check how the app records exposures, or roll back"
            return result
        }
        if !result.healthWarnings.isEmpty {
            result.verdict = .hold
            result.reason =
                "health check: " + result.healthWarnings.joined(separator: "; ")
                + "; the figures cannot be trusted, so the rollout holds at \(percent) % while the warning stands "
                + "(its count never falls within a step: roll back, or stop and start a new rollout once the cause "
                + "is fixed)"
            return result
        }
        let held = now - stepStart
        if held >= plan.minimumHoldSeconds * 1000 && (treatmentUnits == 0 || comparisonUnits == 0) {
            result.verdict = .hold
            result.reason =
                "missing exposures: after \(held / 1000) s at \(percent) % the treatment has \(treatmentUnits) and the "
                + "comparison \(comparisonUnits) exposed units; apps must record exposures (docs/ROLLOUTS.md) before "
                + "the rollout can advance"
            return result
        }
        if held < plan.minimumHoldSeconds * 1000 {
            result.reason = "holding \(percent) % for at least \(plan.minimumHoldSeconds) s (\(held / 1000) s so far)"
            return result
        }
        if min(treatmentUnits, comparisonUnits) < plan.minimumUnitsPerArm {
            result.reason =
                "waiting for \(plan.minimumUnitsPerArm) exposed units per arm at \(percent) % "
                + "(treatment \(treatmentUnits), comparison \(comparisonUnits))"
            return result
        }
        result.verdict = .advance
        result.reason =
            "held \(percent) % for \(held / 1000) s with \(treatmentUnits) treatment and \(comparisonUnits) comparison "
            + "units; no guardrail is significantly worse"
        return result
    }

    private static func estimate(_ variant: VariantAggregates?, _ guardrail: RolloutGuardrail) -> Double? {
        guard let variant, variant.exposedUnits > 0 else { return nil }
        let units = Double(variant.exposedUnits)
        switch guardrail.kind {
        case .ratio:
            let sums = variant.ratioMetrics[guardrail.name] ?? .zero
            return sums.denominatorSum == 0 ? nil : sums.numeratorSum / sums.denominatorSum
        case .mean:
            return (variant.metrics[guardrail.name] ?? .zero).valueSum / units
        case .conversion:
            return Double((variant.metrics[guardrail.name] ?? .zero).convertedUnits) / units
        }
    }

    /// The figures as decisions store them and the API answers them.
    package var json: JSONObject {
        [
            "treatmentUnits": .number(JSONNumber(treatmentUnits)),
            "comparisonUnits": .number(JSONNumber(comparisonUnits)),
            "sampleRatioPValue": .number(JSONNumber(sampleRatioPValue)),
            "healthWarnings": .array(healthWarnings.map(JSONValue.string)),
            "guardrails": .array(
                figures.map { figure in
                    var object: JSONObject = [
                        "event": .string(figure.event), "margin": .number(JSONNumber(figure.margin)),
                        "bad": .string(figure.bad.rawValue), "worse": .bool(figure.worse),
                    ]
                    if let value = figure.treatment { object["treatment"] = .number(JSONNumber(value)) }
                    if let value = figure.comparison { object["comparison"] = .number(JSONNumber(value)) }
                    if let interval = figure.difference, interval.lower.isFinite, interval.upper.isFinite {
                        object["difference"] = [
                            "lower": .number(JSONNumber(interval.lower)), "upper": .number(JSONNumber(interval.upper)),
                        ]
                    }
                    return .object(object)
                }
            ),
        ]
    }
}
