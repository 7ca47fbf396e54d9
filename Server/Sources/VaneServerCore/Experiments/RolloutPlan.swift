package import ExperimentStatistics
import Foundation
import VaneCore

/// What a progressive rollout does, as its creator wrote it (docs/ROLLOUTS.md): which parameters
/// get which new values, for whom, in which steps, and which guardrails stop it. Immutable once
/// created; only the rollout's state and step change (``Rollout``).
package struct RolloutPlan: Sendable, Hashable {
    /// The rollout's id: unique in its environment, 1-63 lower-case letters, digits or dashes.
    package var id: String
    /// What the change is ("the new image cache").
    package var description: String
    /// The parameters and the values the treatment gets.
    package var parameters: [RolloutParameter]
    /// The condition whose units the rollout covers; nil: everyone.
    package var audience: String?
    /// The treatment's shares in percent, increasing, the last 100.
    package var steps: [Double]
    /// The shortest time a step is held before it may advance.
    package var minimumHoldSeconds: Int64
    /// The exposed units each arm needs before a step may advance.
    package var minimumUnitsPerArm: Int
    /// The metrics that must not get worse.
    package var guardrails: [RolloutGuardrail]
    /// What a regression does.
    package var onRegression: RolloutRegressionAction
    /// The error rate of the guard over all guardrails, split evenly among them (Bonferroni).
    package var errorRate: Double
    /// The seed of the rollout's percent bucketing, made at creation: membership depends on it
    /// alone, so a unit that got the new value keeps it as the share grows.
    package var seed: String

    package static let defaultSteps: [Double] = [1, 5, 10, 25, 50, 100]
    package static let defaultMinimumHoldSeconds: Int64 = 3600
    package static let defaultMinimumUnitsPerArm = 500
    package static let defaultErrorRate = 0.05
    /// A sample-ratio-mismatch p-value below this holds the rollout.
    package static let sampleRatioThreshold = 0.001

    /// The arms' names as exposures and results carry them.
    package static let treatmentArm = "treatment"
    package static let comparisonArm = "comparison"

}

/// One parameter a rollout changes.
package struct RolloutParameter: Sendable, Hashable {
    package var key: String
    /// The value the treatment gets (an explicit value as the template stores it).
    package var value: String
}

/// A tracked event the guard watches.
package struct RolloutGuardrail: Sendable, Hashable {
    /// Which way of the metric is bad.
    package enum Direction: String, Sendable, Hashable, CaseIterable {
        /// More is worse (crashes, errors, latency).
        case increase
        /// Less is worse (sessions, purchases).
        case decrease
    }

    /// The tracked event (`client.track("app_crashed")`); also the metric's name.
    package var event: String
    /// Conversion (the share of units with the event), mean (the mean of the events' summed
    /// values per unit) or ratio (the events' summed values over the denominator event's).
    package var kind: ExperimentMetric.Kind
    /// For a ratio: the event whose summed values divide (`http_request` for errors per request).
    package var denominatorEvent: String? = nil
    /// Which way is bad.
    package var bad: Direction
    /// How much worse the treatment may be, in the metric's own units (a share for a conversion,
    /// 0.005 = half a percentage point), before it counts as a regression.
    package var margin: Double

    /// The metric's name in the step experiment and the decisions' figures: the event, or for a
    /// ratio `event/denominatorEvent` (as an experiment's ratio metric is named by default).
    package var name: String {
        kind == .ratio ? "\(event)/\(denominatorEvent ?? "")" : event
    }

    /// The metric the step experiment counts.
    package var metric: ExperimentMetric {
        ExperimentMetric(
            name: name,
            event: event,
            kind: kind,
            denominatorEvent: kind == .ratio ? denominatorEvent : nil
        )
    }

    /// The measure the guard reads: the one the experiment's results decide the metric on.
    package var measure: Measure {
        switch kind {
        case .conversion: .conversionRate
        case .mean: .meanPerUnit
        case .ratio: .ratio
        }
    }
}

/// What a regression does.
package enum RolloutRegressionAction: String, Sendable, Hashable, CaseIterable {
    /// Publish the template without the rollout's values at once (the default).
    case rollBack = "roll_back"
    /// Hold the step and tell people; someone decides.
    case hold
}

/// Where a rollout is in its life.
package enum RolloutState: String, Sendable, Hashable, CaseIterable {
    case draft
    case running
    case paused
    case completed
    case rolledBack = "rolled_back"
    case stopped

    /// A state nothing leaves.
    package var isFinal: Bool { self == .completed || self == .rolledBack || self == .stopped }
}

/// A stored rollout: its plan, where it lives and where it stands.
package struct Rollout: Sendable, Hashable {
    package var environment: EnvironmentKey
    package var plan: RolloutPlan
    package var state: RolloutState
    /// The index of the current step in ``RolloutPlan/steps``; -1 before the start.
    package var step: Int
    /// When the current step began (the guard's clock).
    package var stepStartTime: Int64?
    package var createTime: Int64
    package var creator: String
    package var updateTime: Int64

    package var id: String { plan.id }
    /// The current share in percent; 0 before the start.
    package var percent: Double { step >= 0 && step < plan.steps.count ? plan.steps[step] : 0 }
    /// The step's experiment: the arms' exposures and metric events are counted there.
    package var stepExperimentKey: String { RolloutPlan.experimentKey(id: id, step: step) }
}

extension RolloutPlan {
    /// The condition names of the rollout's arms in the template (Serving's `RolloutTemplate`).
    package static func treatmentCondition(_ id: String) -> String {
        "rollout_" + id.replacingOccurrences(of: "-", with: "_")
    }

    package static func comparisonCondition(_ id: String) -> String {
        treatmentCondition(id) + "_comparison"
    }

    /// The comparison slice's share for a treatment share of `percent`: as large, or the whole
    /// rest when that is smaller.
    package static func comparisonShare(_ percent: Double) -> Double {
        min(percent, 100 - percent)
    }

    /// A percent as conditions write it: `5`, `12.5`, `0.000001`.
    package static func percentText(_ percent: Double) -> String {
        let micro = Int64((percent * 1_000_000).rounded())
        let whole = micro / 1_000_000
        let fraction = micro % 1_000_000
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// The key of the experiment that counts step `step`'s arms: `rollout-<id>-<step + 1>`,
    /// cut to the 63 characters of an experiment key.
    package static func experimentKey(id: String, step: Int) -> String {
        let suffix = "-\(step + 1)"
        return String((experimentKeyPrefix + id).prefix(63 - suffix.count)) + suffix
    }

    /// What every step experiment's key starts with.
    package static let experimentKeyPrefix = "rollout-"

    /// The experiment that counts step `step`: the two arms split as the template splits them,
    /// the guardrails as its metrics, at each guardrail's share of the error rate.
    package func stepExperiment(step: Int) -> ExperimentDefinition {
        let percent = steps[step]
        let metrics = guardrails.map(\.metric)
        return ExperimentDefinition(
            key: Self.experimentKey(id: id, step: step),
            hypothesis: "rollout \(id), step \(step + 1) (\(Self.percentText(percent)) %)",
            parameters: parameters.map(\.key),
            variants: [
                ExperimentVariant(
                    name: Self.comparisonArm,
                    condition: Self.comparisonCondition(id),
                    weight: Self.comparisonShare(percent)
                ),
                ExperimentVariant(name: Self.treatmentArm, condition: Self.treatmentCondition(id), weight: percent),
            ],
            controlVariant: Self.comparisonArm,
            primaryMetric: metrics[0],
            guardrailMetrics: Array(metrics.dropFirst()),
            method: .sequential,
            confidenceLevel: OneSidedRegression.confidenceLevel(errorRate: errorRate, guardrails: guardrails.count),
            sampleRatioThreshold: Self.sampleRatioThreshold
        )
    }
}
