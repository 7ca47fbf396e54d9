import ExperimentStatistics
import VaneCore

/// An experiment's results as `GET …/experiments/{key}/results` answers them: the health checks
/// first, then per metric each variant's estimate and each treatment against control under all
/// three readings (always-valid, fixed-horizon, Bayesian); `method` says which one the experiment
/// is decided by (docs/EXPERIMENTS.md, "Reading results").
enum ExperimentResultsJSON {
    static func results(_ experiment: Experiment, tally: ExperimentTally) -> JSONObject {
        let definition = experiment.definition
        let aggregates = tally.aggregates(for: definition)
        var object: JSONObject = [
            "experiment": .string(experiment.key),
            "status": .string(experiment.status.rawValue),
            "method": .string(definition.method.rawValue),
            "controlVariant": .string(definition.controlVariant),
            "variants": .array(
                aggregates.variants.map { variant in
                    .object([
                        "name": .string(variant.name),
                        "weight": number(variant.splitWeight),
                        "exposedUnits": .number(JSONNumber(variant.exposedUnits)),
                    ])
                }
            ),
        ]
        if let start = experiment.startTime { object["startTime"] = .string(Clock.rfc3339(milliseconds: start)) }
        if let stop = experiment.stopTime { object["stopTime"] = .string(Clock.rfc3339(milliseconds: stop)) }
        var warnings: [String] = []
        var health: JSONObject = ["unitsInSeveralVariants": .number(JSONNumber(tally.unitsInSeveralVariants))]
        if tally.unitsInSeveralVariants > 0 {
            warnings.append(
                "\(tally.unitsInSeveralVariants) unit(s) were exposed to more than one variant and are left out of "
                    + "the results; check that the variants' conditions do not overlap and that the randomization "
                    + "id does not change"
            )
        }
        let analysis: ExperimentResults?
        do {
            analysis = try ExperimentAnalysis.analyze(aggregates)
        } catch {
            analysis = nil
            object["notice"] = .string(notice(error))
        }
        // Computed even when the rest cannot be: exposures to every variant but control are
        // exactly the mismatch to report.
        let exposed = aggregates.variants.contains { $0.exposedUnits > 0 }
        let threshold = AnalysisConfiguration().sampleRatioMismatchThreshold
        if let mismatch = analysis?.sampleRatioMismatch
            ?? (exposed ? SampleRatioMismatch(variants: aggregates.variants, threshold: threshold) : nil)
        {
            health["sampleRatioMismatch"] = sampleRatioMismatch(mismatch)
            if mismatch.isMismatch {
                let observed = mismatch.variants.map { "\($0.variant) \($0.observedUnits)" }.joined(separator: ", ")
                warnings.insert(
                    "sample-ratio mismatch: the exposed units (\(observed)) do not fit the configured split "
                        + "(p \(pValueText(mismatch.pValue)), below \(mismatch.threshold)); find the cause "
                        + "before trusting any difference below",
                    at: 0
                )
            }
        }
        health["warnings"] = .array(warnings.map(JSONValue.string))
        object["health"] = .object(health)
        object["metrics"] = .array(
            definition.metrics.enumerated().map { index, metric in
                var entry = ExperimentJSON.metric(metric).objectValue ?? [:]
                entry["role"] = .string(index == 0 ? "primary" : "guardrail")
                let measures = Self.measures(of: metric).compactMap {
                    analysis?.results(metric: metric.name, measure: $0)
                }
                entry["measures"] = .array(measures.map(Self.measure))
                return .object(entry)
            }
        )
        return object
    }

    /// The measures a metric is read by: the first is the one it is decided on.
    static func measures(of metric: ExperimentMetric) -> [Measure] {
        switch metric.kind {
        case .conversion: [.conversionRate, .meanPerUnit]
        case .mean: [.meanPerUnit, .conversionRate]
        case .ratio: [.ratio]
        }
    }

    private static func notice(_ error: ExperimentStatisticsError) -> String {
        switch error {
        case .controlWithoutUnits(let variant):
            "no results yet: no unit has been exposed to the control variant \"\(variant)\""
        default:
            "the results cannot be computed: \(error)"
        }
    }

    private static func sampleRatioMismatch(_ mismatch: SampleRatioMismatch) -> JSONValue {
        .object([
            "chiSquare": number(mismatch.chiSquare),
            "degreesOfFreedom": .number(JSONNumber(mismatch.degreesOfFreedom)),
            "pValue": number(mismatch.pValue),
            "threshold": number(mismatch.threshold),
            "flagged": .bool(mismatch.isMismatch),
            "variants": .array(
                mismatch.variants.map { count in
                    .object([
                        "variant": .string(count.variant),
                        "observedUnits": .number(JSONNumber(count.observedUnits)),
                        "expectedUnits": number(count.expectedUnits),
                    ])
                }
            ),
        ])
    }

    private static func measure(_ results: MeasureResults) -> JSONValue {
        .object([
            "measure": .string(results.measure.rawValue),
            "variants": .array(
                results.variants.map { variant in
                    var object: JSONObject = [
                        "variant": .string(variant.variant),
                        "exposedUnits": .number(JSONNumber(variant.exposedUnits)),
                    ]
                    if let converted = variant.convertedUnits {
                        object["convertedUnits"] = .number(JSONNumber(converted))
                    }
                    if let estimate = variant.estimate { object["estimate"] = Self.estimate(estimate) }
                    return .object(object)
                }
            ),
            "comparisons": .array(results.comparisons.map(comparison)),
        ])
    }

    private static func comparison(_ comparison: TreatmentComparison) -> JSONValue {
        var object: JSONObject = [
            "variant": .string(comparison.variant),
            "difference": estimate(comparison.difference.absolute),
            "alwaysValid": .object([
                "pValue": number(comparison.alwaysValid.pValue),
                "interval": interval(comparison.alwaysValid.absoluteInterval),
                "relativeInterval": comparison.alwaysValid.relativeInterval.map(interval) ?? .null,
                "mixtureVariance": number(comparison.alwaysValid.mixtureVariance),
            ]),
            "fixedHorizon": .object([
                "zScore": number(comparison.fixedHorizon.zScore),
                "pValue": number(comparison.fixedHorizon.pValue),
                "interval": interval(comparison.fixedHorizon.absoluteInterval),
                "relativeInterval": comparison.fixedHorizon.relativeInterval.map(interval) ?? .null,
            ]),
            "bayesian": .object([
                "model": .string(comparison.bayesian.model.rawValue),
                "chanceToBeatControl": number(comparison.bayesian.chanceToBeatControl),
                "expectedLossOfTreatment": number(comparison.bayesian.expectedLossOfTreatment),
                "expectedLossOfControl": number(comparison.bayesian.expectedLossOfControl),
            ]),
        ]
        object["relativeDifference"] = comparison.difference.relative.map(estimate) ?? .null
        return .object(object)
    }

    private static func estimate(_ estimate: Estimate) -> JSONValue {
        .object(["value": number(estimate.value), "variance": number(estimate.variance)])
    }

    private static func interval(_ interval: Interval) -> JSONValue {
        .object(["lower": number(interval.lower), "upper": number(interval.upper)])
    }

    /// JSON has no infinity or NaN: an unbounded or undefined figure is null.
    private static func number(_ value: Double) -> JSONValue {
        value.isFinite ? .number(JSONNumber(value)) : .null
    }

    /// "= 0.0123", or "< 0.0001" for the tiny p-values a real mismatch gives.
    private static func pValueText(_ value: Double) -> String {
        value < 0.0001 ? "< 0.0001" : "= \((value * 10_000).rounded() / 10_000)"
    }
}
