package import VaneCore

/// Experiments as the API answers them, and their definitions as they are stored (the same
/// members ``ExperimentDefinitionReader`` reads, so a stored definition reads back as written).
package enum ExperimentJSON {
    /// The definition's members.
    package static func definition(_ definition: ExperimentDefinition) -> JSONObject {
        [
            "key": .string(definition.key),
            "hypothesis": .string(definition.hypothesis),
            "parameters": .array(definition.parameters.map { .string($0) }),
            "variants": .array(
                definition.variants.map { variant in
                    [
                        "name": .string(variant.name),
                        "condition": variant.condition.map { .string($0) } ?? .null,
                        "weight": .number(JSONNumber(variant.weight)),
                    ]
                }
            ),
            "controlVariant": .string(definition.controlVariant),
            "primaryMetric": metric(definition.primaryMetric),
            "guardrailMetrics": .array(definition.guardrailMetrics.map(metric)),
            "method": .string(definition.method.rawValue),
            "confidenceLevel": .number(JSONNumber(definition.confidenceLevel)),
            "sampleRatioThreshold": .number(JSONNumber(definition.sampleRatioThreshold)),
        ]
    }

    package static func metric(_ metric: ExperimentMetric) -> JSONValue {
        var object: JSONObject = [
            "name": .string(metric.name), "event": .string(metric.event), "kind": .string(metric.kind.rawValue),
        ]
        if let denominator = metric.denominatorEvent { object["denominatorEvent"] = .string(denominator) }
        return .object(object)
    }

    /// An experiment with where it lives and where it stands.
    package static func experiment(_ experiment: Experiment) -> JSONValue {
        var object = definition(experiment.definition)
        object["project"] = .string(experiment.environment.projectId)
        object["environment"] = .string(experiment.environment.environmentId)
        object["status"] = .string(experiment.status.rawValue)
        object["unit"] = .string("randomizationId")
        object["createTime"] = .string(Clock.rfc3339(milliseconds: experiment.createTime))
        object["createdBy"] = .string(experiment.creator)
        if let start = experiment.startTime { object["startTime"] = .string(Clock.rfc3339(milliseconds: start)) }
        if let version = experiment.startVersion { object["startVersion"] = .string(String(version)) }
        if let stop = experiment.stopTime { object["stopTime"] = .string(Clock.rfc3339(milliseconds: stop)) }
        return .object(object)
    }
}
