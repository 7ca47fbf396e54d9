import ExperimentStatistics
package import VaneCore

/// An experiment's results as `GET …/experiments/{key}/results` answers them: the health checks
/// first, then per metric each variant's estimate and each treatment against control under all
/// three readings (always-valid, fixed-horizon, Bayesian); `method` says which one the experiment
/// is decided by (docs/EXPERIMENTS.md, "Reading results").
package enum ExperimentResultsJSON {
    package static func results(_ report: ExperimentReport) -> JSONObject {
        let experiment = report.experiment
        let definition = report.definition
        var object: JSONObject = [
            "experiment": .string(experiment.key),
            "status": .string(experiment.status.rawValue),
            "method": .string(definition.method.rawValue),
            "controlVariant": .string(definition.controlVariant),
            "confidenceLevel": number(definition.confidenceLevel),
            "sampleRatioThreshold": number(definition.sampleRatioThreshold),
            "variants": .array(
                report.aggregates.variants.map { variant in
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
        var health: JSONObject = [
            "unitsInSeveralVariants": .number(JSONNumber(report.unitsInSeveralVariants)),
            "exposuresWithoutFetch": .number(JSONNumber(report.exposuresWithoutFetch)),
        ]
        if let notice = report.notice { object["notice"] = .string(notice) }
        if let mismatch = report.sampleRatioMismatch { health["sampleRatioMismatch"] = sampleRatioMismatch(mismatch) }
        health["warnings"] = .array(report.warnings.map(JSONValue.string))
        object["health"] = .object(health)
        object["metrics"] = .array(
            definition.metrics.enumerated().map { index, metric in
                var entry = ExperimentJSON.metric(metric).objectValue ?? [:]
                entry["role"] = .string(index == 0 ? "primary" : "guardrail")
                entry["measures"] = .array(report.measures(of: metric).map(Self.measure))
                return .object(entry)
            }
        )
        return object
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
                    if let interval = variant.interval { object["interval"] = Self.interval(interval) }
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
                "mixtureVariance": number(comparison.latestLook.mixtureVariance),
                "latestLook": .object([
                    "pValue": number(comparison.latestLook.pValue),
                    "interval": interval(comparison.latestLook.absoluteInterval),
                    "relativeInterval": comparison.latestLook.relativeInterval.map(interval) ?? .null,
                    "counts": .bool(comparison.latestLook.isInformative),
                ]),
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
}
