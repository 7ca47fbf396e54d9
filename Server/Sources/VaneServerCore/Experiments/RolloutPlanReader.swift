package import VaneCore

/// Reads a rollout plan from the JSON a request carries (or the store kept), collecting every
/// problem with its JSON path instead of stopping at the first.
///
/// ```json
/// {"id": "new-image-cache", "parameters": [{"key": "image_cache", "value": "v2"}],
///  "audience": "ios_users", "steps": [1, 5, 10, 25, 50, 100], "minimumHoldSeconds": 3600,
///  "minimumUnitsPerArm": 500, "onRegression": "roll_back", "errorRate": 0.05,
///  "guardrails": [{"event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0.002}]}
/// ```
package enum RolloutPlanReader {
    package static let maximumParameters = 50
    /// Guardrails per rollout: each gets errorRate / count, and an experiment's level stops at 0.999.
    package static let maximumGuardrails = 10
    package static let maximumSteps = 20
    package static let maximumDescriptionCharacters = 2_000
    /// A step's share has at most six decimals, as percent conditions do.
    package static let smallestStep = 0.000001
    package static let errorRates: ClosedRange<Double> = 0.001...0.2
    /// A week: longer holds are a plan nobody watches.
    package static let maximumHoldSeconds: Int64 = 7 * 24 * 3600

    package static let members: Set<String> = [
        "id", "description", "parameters", "audience", "steps", "minimumHoldSeconds", "minimumUnitsPerArm",
        "guardrails", "onRegression", "onMissingData", "errorRate", "seed",
    ]

    /// The plan, or every problem found. A stored plan carries its `seed`; a new one gets
    /// `seed` (the caller's fresh one) when the JSON has none.
    package static func read(_ object: JSONObject, seed newSeed: String) -> Result<RolloutPlan, DocumentError> {
        var issues: [ValidationIssue] = []
        func problem(_ path: JSONPath, _ rule: String, _ message: String) {
            issues.append(ValidationIssue(.error, at: path, rule: rule, message))
        }
        let root = JSONPath.root
        DocumentReading.unknownMembers(object, allowed: members, problem)
        let id = DocumentReading.identifier(object, member: "id", problem)
        let description = DocumentReading.optionalText(
            object,
            member: "description",
            maximum: maximumDescriptionCharacters,
            problem
        )

        let parameters = readParameters(object["parameters"], at: root.appending("parameters"), problem)

        var audience: String?
        switch object["audience"] {
        case nil, .null?: break
        case .string(let name)? where !name.isEmpty: audience = name
        case let other?:
            problem(
                root.appending("audience"),
                "type",
                "expected the name of a template condition, or null for everyone, found \(other.kindDescription)"
            )
        }

        let steps = readSteps(object["steps"], at: root.appending("steps"), problem)
        let hold = readInteger(
            object["minimumHoldSeconds"],
            at: root.appending("minimumHoldSeconds"),
            range: 0...maximumHoldSeconds,
            default: RolloutPlan.defaultMinimumHoldSeconds,
            problem
        )
        let units = readInteger(
            object["minimumUnitsPerArm"],
            at: root.appending("minimumUnitsPerArm"),
            range: 1...10_000_000,
            default: Int64(RolloutPlan.defaultMinimumUnitsPerArm),
            problem
        )
        let guardrails = readGuardrails(object["guardrails"], at: root.appending("guardrails"), problem)

        var onRegression = RolloutRegressionAction.rollBack
        switch object["onRegression"] {
        case nil, .null?: break
        case .string(let text)? where RolloutRegressionAction(rawValue: text) != nil:
            onRegression = RolloutRegressionAction(rawValue: text) ?? .rollBack
        case let other?:
            problem(
                root.appending("onRegression"),
                "enum",
                "expected \"roll_back\" or \"hold\", found \(describe(other))"
            )
        }
        switch object["onMissingData"] {
        case nil, .null?, .string("hold")?: break
        case let other?:
            problem(
                root.appending("onMissingData"),
                "enum",
                "expected \"hold\" (missing data never advances or rolls back a rollout), found \(describe(other))"
            )
        }
        var errorRate = RolloutPlan.defaultErrorRate
        switch object["errorRate"] {
        case nil, .null?: break
        case .number(let number)?:
            if case let value = number.value, errorRates.contains(value) {
                errorRate = value
            } else {
                problem(root.appending("errorRate"), "range", "expected a number from 0.001 to 0.2, found \(number)")
            }
        case let other?:
            problem(
                root.appending("errorRate"),
                "type",
                "expected a number from 0.001 to 0.2, found \(other.kindDescription)"
            )
        }
        if !guardrails.isEmpty, errorRate / Double(guardrails.count) < 0.001 {
            problem(
                root.appending("errorRate"),
                "range",
                "split across \(guardrails.count) guardrails, each gets \(errorRate / Double(guardrails.count)), "
                    + "less than 0.001; raise the error rate or watch fewer guardrails"
            )
        }
        var seed = newSeed
        switch object["seed"] {
        case nil, .null?: break
        case .string(let text)? where !text.isEmpty && text.count <= 100 && !text.contains("'"):
            seed = text
        case let other?:
            problem(
                root.appending("seed"),
                "type",
                "expected a string of 1-100 characters without quotes, found \(describe(other))"
            )
        }

        guard issues.isEmpty else { return .failure(DocumentError(issues: issues)) }
        return .success(
            RolloutPlan(
                id: id,
                description: description,
                parameters: parameters,
                audience: audience,
                steps: steps,
                minimumHoldSeconds: hold,
                minimumUnitsPerArm: Int(units),
                guardrails: guardrails,
                onRegression: onRegression,
                errorRate: errorRate,
                seed: seed
            )
        )
    }

    /// One line for an error message: how many problems, and the first.
    package static func summary(_ issues: [ValidationIssue]) -> String {
        DocumentReading.summary(issues, of: "rollout")
    }

    private typealias Problem = DocumentReading.Problem

    private static func describe(_ value: JSONValue) -> String {
        if case .string(let text) = value { return "\"\(text.prefix(64))\"" }
        return value.kindDescription
    }

    private static func readParameters(_ value: JSONValue?, at path: JSONPath, _ problem: Problem) -> [RolloutParameter]
    {
        guard case .array(let items)? = value, !items.isEmpty else {
            problem(path, "required", "required: an array of {\"key\": …, \"value\": …}, at least one")
            return []
        }
        if items.count > maximumParameters { problem(path, "count", "at most \(maximumParameters) parameters") }
        var parameters: [RolloutParameter] = []
        for (index, item) in items.prefix(maximumParameters).enumerated() {
            let here = path.appending(index)
            guard case .object(let object) = item else {
                problem(here, "type", "expected an object with \"key\" and \"value\", found \(item.kindDescription)")
                continue
            }
            for member in object where !["key", "value"].contains(member.key) {
                problem(here.appending(member.key), "unknown-member", "unknown member; expected key or value")
            }
            guard case .string(let key)? = object["key"], !key.isEmpty else {
                problem(here.appending("key"), "required", "required: the key of a parameter in the live template")
                continue
            }
            guard case .string(let text)? = object["value"] else {
                problem(
                    here.appending("value"),
                    "type",
                    "required: the new value as a string, as the template stores it (\"true\", \"42\", \"v2\")"
                )
                continue
            }
            if parameters.contains(where: { $0.key == key }) {
                problem(here.appending("key"), "duplicate", "parameter \"\(key)\" is listed twice")
                continue
            }
            parameters.append(RolloutParameter(key: key, value: text))
        }
        return parameters
    }

    private static func readSteps(_ value: JSONValue?, at path: JSONPath, _ problem: Problem) -> [Double] {
        switch value {
        case nil, .null?: return RolloutPlan.defaultSteps
        case .array(let items)?:
            guard !items.isEmpty, items.count <= maximumSteps else {
                problem(path, "count", "expected 1-\(maximumSteps) steps, the last 100")
                return []
            }
            var steps: [Double] = []
            for (index, item) in items.enumerated() {
                guard case .number(let number) = item, case let percent = number.value, percent > 0, percent <= 100,
                    (percent * 1_000_000).rounded() == percent * 1_000_000
                else {
                    problem(
                        path.appending(index),
                        "range",
                        "expected a percent above 0 and at most 100, with at most six decimals, found \(describe(item))"
                    )
                    return []
                }
                if let last = steps.last, percent <= last {
                    problem(
                        path.appending(index),
                        "increasing",
                        "steps must increase: \(RolloutPlan.percentText(percent)) follows \(RolloutPlan.percentText(last))"
                    )
                    return []
                }
                steps.append(percent)
            }
            if steps.last != 100 {
                problem(path.appending(items.count - 1), "last", "the last step must be 100 (everyone in the audience)")
            }
            return steps
        case let other?:
            problem(path, "type", "expected an array of percents, found \(other.kindDescription)")
            return []
        }
    }

    private static func readInteger(
        _ value: JSONValue?,
        at path: JSONPath,
        range: ClosedRange<Int64>,
        default fallback: Int64,
        _ problem: Problem
    ) -> Int64 {
        switch value {
        case nil, .null?: return fallback
        case .number(let number)?:
            if case let double = number.value, double.rounded() == double, double >= Double(range.lowerBound),
                double <= Double(range.upperBound)
            {
                return Int64(double)
            }
            problem(
                path,
                "range",
                "expected a whole number from \(range.lowerBound) to \(range.upperBound), found \(number)"
            )
        case let other?:
            problem(path, "type", "expected a whole number, found \(other.kindDescription)")
        }
        return fallback
    }

    private static func readGuardrails(_ value: JSONValue?, at path: JSONPath, _ problem: Problem) -> [RolloutGuardrail]
    {
        guard case .array(let items)? = value, !items.isEmpty else {
            problem(
                path,
                "required",
                "required: at least one guardrail {\"event\": …, \"kind\": \"conversion\"|\"mean\"|\"ratio\", \"bad\": \"increase\"|\"decrease\", \"margin\": …}"
            )
            return []
        }
        if items.count > maximumGuardrails { problem(path, "count", "at most \(maximumGuardrails) guardrails") }
        var guardrails: [RolloutGuardrail] = []
        for (index, item) in items.prefix(maximumGuardrails).enumerated() {
            let here = path.appending(index)
            guard case .object(let object) = item else {
                problem(here, "type", "expected an object, found \(item.kindDescription)")
                continue
            }
            for member in object where !["event", "denominatorEvent", "kind", "bad", "margin"].contains(member.key) {
                problem(
                    here.appending(member.key),
                    "unknown-member",
                    "unknown member; expected event, denominatorEvent, kind, bad or margin"
                )
            }
            var valid = true
            let event = object["event"]?.stringValue ?? ""
            if event.isEmpty || event.count > ExperimentDefinitionReader.maximumNameCharacters {
                problem(
                    here.appending("event"),
                    "required",
                    "required: the tracked event's name, 1-\(ExperimentDefinitionReader.maximumNameCharacters) characters"
                )
                valid = false
            }
            var kind = ExperimentMetric.Kind.conversion
            switch object["kind"] {
            case .string(let text)? where ExperimentMetric.Kind(rawValue: text) != nil:
                kind = ExperimentMetric.Kind(rawValue: text) ?? .conversion
            case let other:
                problem(
                    here.appending("kind"),
                    "enum",
                    "expected \"conversion\", \"mean\" or \"ratio\", found \(other.map(describe) ?? "nothing")"
                )
                valid = false
            }
            // A ratio's denominator, as an experiment's ratio metric names it (errors per request).
            var denominator: String?
            if kind == .ratio {
                denominator = ExperimentDefinitionReader.readName(
                    object["denominatorEvent"],
                    at: here.appending("denominatorEvent"),
                    what: "event",
                    problem
                )
                if denominator == nil { valid = false }
            } else if object["denominatorEvent"] != nil, object["denominatorEvent"] != .null {
                problem(
                    here.appending("denominatorEvent"),
                    "unexpected",
                    "only a \"ratio\" guardrail has a denominator event"
                )
                valid = false
            }
            let guardrail = RolloutGuardrail(
                event: event,
                kind: kind,
                denominatorEvent: denominator,
                bad: .increase,
                margin: 0
            )
            if valid, guardrails.contains(where: { $0.name == guardrail.name }) {
                problem(here.appending("event"), "duplicate", "\"\(guardrail.name)\" is already a guardrail")
                valid = false
            }
            var bad = RolloutGuardrail.Direction.increase
            switch object["bad"] {
            case .string(let text)? where RolloutGuardrail.Direction(rawValue: text) != nil:
                bad = RolloutGuardrail.Direction(rawValue: text) ?? .increase
            case let other:
                problem(
                    here.appending("bad"),
                    "enum",
                    "expected \"increase\" or \"decrease\" (the way that hurts), found \(other.map(describe) ?? "nothing")"
                )
                valid = false
            }
            var margin = 0.0
            let range = kind == .conversion ? "0 to below 1 (a share: 0.005 is half a percentage point)" : "0 or more"
            switch object["margin"] {
            case nil, .null?: break
            case .number(let number)?:
                if case let value = number.value, value >= 0, value.isFinite, kind != .conversion || value < 1 {
                    margin = value
                } else {
                    problem(here.appending("margin"), "range", "expected a number from \(range), found \(number)")
                    valid = false
                }
            case let other?:
                problem(
                    here.appending("margin"),
                    "type",
                    "expected a number from \(range), found \(other.kindDescription)"
                )
                valid = false
            }
            if valid {
                guardrails.append(
                    RolloutGuardrail(event: event, kind: kind, denominatorEvent: denominator, bad: bad, margin: margin)
                )
            }
        }
        return guardrails
    }
}
