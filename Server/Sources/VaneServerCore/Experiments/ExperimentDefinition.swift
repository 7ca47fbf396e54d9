package import ExperimentStatistics
import VaneCore

/// What an experiment tests, as its creator wrote it: which parameters, which variants and how
/// they split, what it measures and how the results are read. Immutable once created; only the
/// experiment's status changes (``Experiment``).
package struct ExperimentDefinition: Sendable, Hashable {
    /// The experiment's key: unique in its environment, 1-63 lower-case letters, digits or dashes.
    package var key: String
    /// What the experiment is expected to show ("a green button raises checkout completion").
    package var hypothesis: String
    /// The template parameters whose values the variants change.
    package var parameters: [String]
    /// The variants, control included, in the order they were written.
    package var variants: [ExperimentVariant]
    /// The name of the variant the others are compared with.
    package var controlVariant: String
    /// The metric the experiment is decided on.
    package var primaryMetric: ExperimentMetric
    /// Metrics that must not get worse (crashes, latency, unsubscribes).
    package var guardrailMetrics: [ExperimentMetric]
    /// How results are read.
    package var method: ExperimentMethod
    /// The coverage of every interval and the p-values' threshold 1 − level, 0.8-0.999.
    package var confidenceLevel: Double = Self.defaultConfidenceLevel
    /// A sample-ratio-mismatch p-value below this flags the experiment, 1e-6-0.05.
    package var sampleRatioThreshold: Double = Self.defaultSampleRatioThreshold

    package static let defaultConfidenceLevel = AnalysisConfiguration().confidenceLevel
    package static let defaultSampleRatioThreshold = AnalysisConfiguration().sampleRatioMismatchThreshold
    package static let confidenceLevels: ClosedRange<Double> = 0.8...0.999
    package static let sampleRatioThresholds: ClosedRange<Double> = 1e-6...0.05

    /// Every metric: the primary one first.
    package var metrics: [ExperimentMetric] { [primaryMetric] + guardrailMetrics }

    /// The statistics' settings: the experiment's level and threshold, the rest the defaults; a
    /// rollout's step experiment (its key prefix is reserved for them) gets the guard's mixture
    /// and rate variances (``AnalysisConfiguration/guardrail(confidenceLevel:sampleRatioMismatchThreshold:)``).
    package var analysisConfiguration: AnalysisConfiguration {
        key.hasPrefix(RolloutPlan.experimentKeyPrefix)
            ? .guardrail(confidenceLevel: confidenceLevel, sampleRatioMismatchThreshold: sampleRatioThreshold)
            : AnalysisConfiguration(
                confidenceLevel: confidenceLevel,
                sampleRatioMismatchThreshold: sampleRatioThreshold
            )
    }

    /// The variant a unit that matches `condition` (nil: none of the variants' conditions) gets.
    package func variant(forCondition condition: String?) -> ExperimentVariant? {
        variants.first { $0.condition == condition }
    }
}

/// One arm of an experiment.
package struct ExperimentVariant: Sendable, Hashable {
    /// What results and clients call it ("control", "green").
    package var name: String
    /// The template condition that puts a unit in this variant (normally a `percent` condition
    /// with the experiment's seed); nil for the variant of units that match none of the others'
    /// conditions, which get the parameters' default values.
    package var condition: String?
    /// Its share of the split, relative to the other variants' (50 and 50, or 1 and 1); the
    /// sample-ratio check compares the exposures with it.
    package var weight: Double
}

/// Something the experiment measures, from the metric events apps track.
package struct ExperimentMetric: Sendable, Hashable {
    /// How the events become a number per variant.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The share of exposed units with at least one event.
        case conversion
        /// The mean per exposed unit of the events' summed values (units without events count 0).
        case mean
        /// The sum of the events' values over the sum of the denominator event's values.
        case ratio
    }

    /// The name results use: unique within the experiment.
    package var name: String
    /// The tracked event it reads (`client.track("checkout_completed", …)`).
    package var event: String
    /// How it is computed.
    package var kind: Kind
    /// For a ratio: the event whose values are the denominator.
    package var denominatorEvent: String?
}

/// How an experiment's results are read (docs/EXPERIMENTS.md, "Which to use").
package enum ExperimentMethod: String, Sendable, Hashable, CaseIterable {
    /// Frequentist with always-valid (mSPRT) p-values and intervals: safe to look at daily.
    case sequential
    /// Bayesian: the chance to beat control and the expected loss.
    case bayesian
}

/// Where an experiment is in its life.
package enum ExperimentStatus: String, Sendable, Hashable, CaseIterable {
    /// Defined, not yet counting exposures.
    case draft
    /// Counting exposures and metric events.
    case running
    /// Finished: no more counting; results stay readable.
    case stopped
}

/// A stored experiment: its definition, where it lives and where it stands.
package struct Experiment: Sendable, Hashable {
    package var environment: EnvironmentKey
    package var definition: ExperimentDefinition
    package var status: ExperimentStatus
    package var createTime: Int64
    /// Who created it (the audit log's name for the person or key).
    package var creator: String
    package var startTime: Int64?
    /// The live template version when it started.
    package var startVersion: Int64?
    package var stopTime: Int64?

    package var key: String { definition.key }
}
