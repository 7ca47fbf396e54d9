package import VaneCore

/// Rollouts as the API answers them, and their plans as they are stored (the members
/// ``RolloutPlanReader`` reads, so a stored plan reads back as written).
package enum RolloutJSON {
    package static func plan(_ plan: RolloutPlan) -> JSONObject {
        [
            "id": .string(plan.id),
            "description": .string(plan.description),
            "parameters": .array(
                plan.parameters.map { ["key": .string($0.key), "value": .string($0.value)] }
            ),
            "audience": plan.audience.map { .string($0) } ?? .null,
            "steps": .array(plan.steps.map { .number(JSONNumber($0)) }),
            "minimumHoldSeconds": .number(JSONNumber(Int(plan.minimumHoldSeconds))),
            "minimumUnitsPerArm": .number(JSONNumber(plan.minimumUnitsPerArm)),
            "guardrails": .array(
                plan.guardrails.map {
                    var object: JSONObject = [
                        "event": .string($0.event), "kind": .string($0.kind.rawValue), "bad": .string($0.bad.rawValue),
                        "margin": .number(JSONNumber($0.margin)),
                    ]
                    if let denominator = $0.denominatorEvent { object["denominatorEvent"] = .string(denominator) }
                    return .object(object)
                }
            ),
            "onRegression": .string(plan.onRegression.rawValue),
            "onMissingData": "hold",
            "errorRate": .number(JSONNumber(plan.errorRate)),
            "seed": .string(plan.seed),
        ]
    }

    /// A rollout with where it stands; with its decisions when given.
    package static func rollout(_ rollout: Rollout, decisions: [RolloutDecision]? = nil) -> JSONValue {
        var object = plan(rollout.plan)
        object["project"] = .string(rollout.environment.projectId)
        object["environment"] = .string(rollout.environment.environmentId)
        object["state"] = .string(rollout.state.rawValue)
        object["createTime"] = .string(Clock.rfc3339(milliseconds: rollout.createTime))
        object["createdBy"] = .string(rollout.creator)
        object["updateTime"] = .string(Clock.rfc3339(milliseconds: rollout.updateTime))
        if rollout.step >= 0 {
            object["step"] = .number(JSONNumber(rollout.step + 1))
            object["percent"] = .number(JSONNumber(rollout.percent))
            object["stepExperiment"] = .string(rollout.stepExperimentKey)
        }
        if let start = rollout.stepStartTime {
            object["stepStartTime"] = .string(Clock.rfc3339(milliseconds: start))
        }
        if let decisions { object["decisions"] = .array(decisions.map(decision)) }
        return .object(object)
    }

    package static func decision(_ decision: RolloutDecision) -> JSONValue {
        var object: JSONObject = [
            "time": .string(Clock.rfc3339(milliseconds: decision.time)),
            "step": .number(JSONNumber(decision.step + 1)),
            "percent": .number(JSONNumber(decision.percent)),
            "action": .string(decision.action.rawValue),
            "actor": .string(decision.actor),
            "reason": .string(decision.reason),
        ]
        if let figures = decision.figures { object["figures"] = .object(figures) }
        return .object(object)
    }
}

/// One decision about a rollout, by the guard or a person.
package struct RolloutDecision: Sendable, Hashable {
    package enum Action: String, Sendable, Hashable, CaseIterable {
        case start, advance, complete, hold, pause, resume, stop
        case rollBack = "roll_back"
    }

    package var time: Int64
    /// The step it was made at (its index).
    package var step: Int
    package var percent: Double
    package var action: Action
    package var actor: String
    package var reason: String
    /// The guard's figures (``RolloutAssessment/json``); nil for a person's decision.
    package var figures: JSONObject?
}
