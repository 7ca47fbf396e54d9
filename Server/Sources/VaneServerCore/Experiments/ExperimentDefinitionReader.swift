package import VaneCore

/// Reads an experiment definition from the JSON a request or file carries, collecting every
/// problem with its JSON path instead of stopping at the first.
///
/// ```json
/// {"key": "checkout-button", "hypothesis": "A green button raises checkout completion",
///  "parameters": ["checkout_button_color"],
///  "variants": [{"name": "control", "weight": 50},
///               {"name": "green", "condition": "checkout_green", "weight": 50}],
///  "primaryMetric": {"event": "checkout_completed", "kind": "conversion"},
///  "guardrailMetrics": [{"event": "app_crashed", "kind": "conversion"}],
///  "method": "sequential", "confidenceLevel": 0.95, "sampleRatioThreshold": 0.001}
/// ```
package enum ExperimentDefinitionReader {
    /// Variants per experiment: enough for any sensible test, few enough to keep the analysis
    /// and the per-variant aggregates small.
    package static let maximumVariants = 10
    /// Metrics per experiment, primary included.
    package static let maximumMetrics = 20
    /// Parameters per experiment.
    package static let maximumParameters = 50
    /// Characters of a hypothesis.
    package static let maximumHypothesisCharacters = 2_000
    /// Characters of a variant's, a metric's or an event's name.
    package static let maximumNameCharacters = 100

    package static let members: Set<String> = [
        "key", "hypothesis", "parameters", "variants", "controlVariant", "primaryMetric", "guardrailMetrics", "method",
        "confidenceLevel", "sampleRatioThreshold",
    ]

    /// The definition, or every problem found.
    package static func read(_ object: JSONObject) -> Result<ExperimentDefinition, DocumentError> {
        var issues: [ValidationIssue] = []
        func problem(_ path: JSONPath, _ rule: String, _ message: String) {
            issues.append(ValidationIssue(.error, at: path, rule: rule, message))
        }
        let root = JSONPath.root
        DocumentReading.unknownMembers(object, allowed: members, problem)
        let key = DocumentReading.identifier(object, member: "key", problem)
        let hypothesis = DocumentReading.optionalText(
            object,
            member: "hypothesis",
            maximum: maximumHypothesisCharacters,
            problem
        )

        let parameters = readParameters(object["parameters"], at: root.appending("parameters"), problem)
        let variants = readVariants(object["variants"], at: root.appending("variants"), problem)
        let controlVariant = readControl(object["controlVariant"], variants: variants, at: root, problem)
        var metricEntries: [(metric: ExperimentMetric, path: JSONPath)] = []
        let primaryPath = root.appending("primaryMetric")
        var primary: ExperimentMetric?
        if let value = object["primaryMetric"] {
            primary = readMetric(value, at: primaryPath, problem)
            if let primary { metricEntries.append((primary, primaryPath)) }
        } else {
            problem(primaryPath, "required", "required: the metric the experiment is decided on")
        }
        switch object["guardrailMetrics"] {
        case nil, .null?: break
        case .array(let items)?:
            if items.count + 1 > maximumMetrics {
                problem(root.appending("guardrailMetrics"), "count", "at most \(maximumMetrics - 1) guardrail metrics")
            }
            for (index, item) in items.prefix(maximumMetrics).enumerated() {
                let path = root.appending("guardrailMetrics").appending(index)
                if let metric = readMetric(item, at: path, problem) { metricEntries.append((metric, path)) }
            }
        case let other?:
            problem(root.appending("guardrailMetrics"), "type", "expected an array, found \(other.kindDescription)")
        }
        var names: Set<String> = []
        for entry in metricEntries where !names.insert(entry.metric.name).inserted {
            problem(
                entry.path.appending("name"),
                "duplicate",
                "another metric is already named \"\(entry.metric.name)\"; give this one a \"name\""
            )
        }
        let guardrails = metricEntries.dropFirst(primary == nil ? 0 : 1).map(\.metric)

        var method = ExperimentMethod.sequential
        switch object["method"] {
        case nil, .null?: break
        case .string(let text)?:
            if let chosen = ExperimentMethod(rawValue: text) {
                method = chosen
            } else {
                problem(root.appending("method"), "enum", "expected \"sequential\" or \"bayesian\", found \"\(text)\"")
            }
        case let other?:
            problem(
                root.appending("method"),
                "type",
                "expected \"sequential\" or \"bayesian\", found \(other.kindDescription)"
            )
        }

        let confidenceLevel = readSetting(
            object["confidenceLevel"],
            at: root.appending("confidenceLevel"),
            range: ExperimentDefinition.confidenceLevels,
            default: ExperimentDefinition.defaultConfidenceLevel,
            what: "the coverage of every interval (0.95: 95 %)",
            problem
        )
        let sampleRatioThreshold = readSetting(
            object["sampleRatioThreshold"],
            at: root.appending("sampleRatioThreshold"),
            range: ExperimentDefinition.sampleRatioThresholds,
            default: ExperimentDefinition.defaultSampleRatioThreshold,
            what: "the sample-ratio check's p-value threshold",
            problem
        )

        guard issues.isEmpty, let primary, let controlVariant else {
            return .failure(DocumentError(issues: issues))
        }
        return .success(
            ExperimentDefinition(
                key: key,
                hypothesis: hypothesis,
                parameters: parameters,
                variants: variants,
                controlVariant: controlVariant,
                primaryMetric: primary,
                guardrailMetrics: guardrails,
                method: method,
                confidenceLevel: confidenceLevel,
                sampleRatioThreshold: sampleRatioThreshold
            )
        )
    }

    /// A number setting within `range`; `default` when absent or null.
    private static func readSetting(
        _ value: JSONValue?,
        at path: JSONPath,
        range: ClosedRange<Double>,
        default fallback: Double,
        what: String,
        _ problem: Problem
    ) -> Double {
        switch value {
        case nil, .null?:
            return fallback
        case .number(let number)? where range.contains(number.value):
            return number.value
        case .number(let number)?:
            problem(
                path,
                "range",
                "\(number) is out of range; expected \(what), a number from \(range.lowerBound) to \(range.upperBound) "
                    + "(default \(fallback))"
            )
        case let other?:
            problem(
                path,
                "type",
                "expected \(what), a number from \(range.lowerBound) to \(range.upperBound), found \(other.kindDescription)"
            )
        }
        return fallback
    }

    package typealias Problem = DocumentReading.Problem

    private static func readParameters(_ value: JSONValue?, at path: JSONPath, _ problem: Problem) -> [String] {
        guard case .array(let items)? = value, !items.isEmpty else {
            problem(path, "required", "required: a non-empty array of the template parameters the variants change")
            return []
        }
        if items.count > maximumParameters { problem(path, "count", "at most \(maximumParameters) parameters") }
        var keys: [String] = []
        for (index, item) in items.prefix(maximumParameters).enumerated() {
            guard case .string(let key) = item, !key.isEmpty else {
                problem(path.appending(index), "type", "expected a parameter key (a non-empty string)")
                continue
            }
            if keys.contains(key) {
                problem(path.appending(index), "duplicate", "\"\(key)\" is listed twice")
            } else {
                keys.append(key)
            }
        }
        return keys
    }

    private static func readVariants(_ value: JSONValue?, at path: JSONPath, _ problem: Problem) -> [ExperimentVariant]
    {
        guard case .array(let items)? = value else {
            problem(path, "required", "required: an array of at least two variants, control included")
            return []
        }
        if items.count < 2 { problem(path, "count", "an experiment needs at least two variants, control included") }
        if items.count > maximumVariants { problem(path, "count", "at most \(maximumVariants) variants") }
        var variants: [ExperimentVariant] = []
        for (index, item) in items.prefix(maximumVariants).enumerated() {
            let here = path.appending(index)
            guard case .object(let variant) = item else {
                problem(here, "type", "expected an object with \"name\", \"condition\" and \"weight\"")
                continue
            }
            for member in variant where !["name", "condition", "weight"].contains(member.key) {
                problem(
                    here.appending(member.key),
                    "unknown-member",
                    "unknown member; expected name, condition or weight"
                )
            }
            let name = readName(variant["name"], at: here.appending("name"), what: "variant", problem)
            var condition: String?
            switch variant["condition"] {
            case nil, .null?: break
            case .string(let text)? where !text.isEmpty: condition = text
            case let other?:
                problem(
                    here.appending("condition"),
                    "type",
                    "expected the name of a template condition, or null for units that match none, found \(other.kindDescription)"
                )
            }
            var weight = 0.0
            if case .number(let number)? = variant["weight"], number.value.isFinite, number.value > 0,
                number.value <= 1_000_000
            {
                weight = number.value
            } else {
                problem(
                    here.appending("weight"),
                    "range",
                    "required: the variant's share of the split, a number above 0"
                )
            }
            if let name {
                if variants.contains(where: { $0.name == name }) {
                    problem(here.appending("name"), "duplicate", "another variant is already named \"\(name)\"")
                } else if variants.contains(where: { $0.condition == condition }) {
                    problem(
                        here.appending("condition"),
                        "duplicate",
                        condition.map { "another variant already uses condition \"\($0)\"" }
                            ?? "only one variant can have no condition (the units that match none of the others)"
                    )
                } else {
                    variants.append(ExperimentVariant(name: name, condition: condition, weight: weight))
                }
            }
        }
        return variants
    }

    /// The control: named, else the variant without a condition, else the first.
    private static func readControl(
        _ value: JSONValue?,
        variants: [ExperimentVariant],
        at root: JSONPath,
        _ problem: Problem
    ) -> String? {
        switch value {
        case nil, .null?:
            return (variants.first { $0.condition == nil } ?? variants.first)?.name
        case .string(let name)?:
            guard variants.contains(where: { $0.name == name }) else {
                let known = variants.map { "\"\($0.name)\"" }.joined(separator: ", ")
                problem(
                    root.appending("controlVariant"),
                    "unknown-variant",
                    "no variant is named \"\(name)\"; variants: \(known)"
                )
                return nil
            }
            return name
        case let other?:
            problem(
                root.appending("controlVariant"),
                "type",
                "expected a variant's name, found \(other.kindDescription)"
            )
            return nil
        }
    }

    private static func readMetric(_ value: JSONValue, at path: JSONPath, _ problem: Problem) -> ExperimentMetric? {
        guard case .object(let object) = value else {
            problem(path, "type", "expected an object with \"event\" and \"kind\", found \(value.kindDescription)")
            return nil
        }
        for member in object where !["name", "event", "kind", "denominatorEvent"].contains(member.key) {
            problem(
                path.appending(member.key),
                "unknown-member",
                "unknown member; expected name, event, kind or denominatorEvent"
            )
        }
        let event = readName(object["event"], at: path.appending("event"), what: "event", problem)
        var kind: ExperimentMetric.Kind?
        let kinds = ExperimentMetric.Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        if case .string(let text)? = object["kind"], let known = ExperimentMetric.Kind(rawValue: text) {
            kind = known
        } else {
            problem(path.appending("kind"), "enum", "required: one of \(kinds)")
        }
        var denominator: String?
        if kind == .ratio {
            denominator = readName(
                object["denominatorEvent"],
                at: path.appending("denominatorEvent"),
                what: "event",
                problem
            )
        } else if object["denominatorEvent"] != nil, object["denominatorEvent"] != .null {
            problem(path.appending("denominatorEvent"), "unexpected", "only a \"ratio\" metric has a denominator event")
        }
        var name: String?
        if object["name"] != nil {
            name = readName(object["name"], at: path.appending("name"), what: "metric", problem)
        }
        guard let event, let kind, kind != .ratio || denominator != nil else { return nil }
        let defaultName = kind == .ratio ? "\(event)/\(denominator ?? "")" : event
        return ExperimentMetric(name: name ?? defaultName, event: event, kind: kind, denominatorEvent: denominator)
    }

    /// A name: 1-100 characters of letters, digits, `_`, `-`, `.`, `:` or `/`, as event names are
    /// written in analytics tools (`checkout_completed`, `screen:checkout`).
    package static func readName(_ value: JSONValue?, at path: JSONPath, what: String, _ problem: Problem) -> String? {
        guard case .string(let name)? = value else {
            problem(path, "required", "required: the \(what)'s name, a string")
            return nil
        }
        guard isValidName(name) else {
            problem(
                path,
                "name",
                "\"\(name.prefix(maximumNameCharacters))\" must be 1-\(maximumNameCharacters) letters, digits, '_', '-', '.', ':' or '/'"
            )
            return nil
        }
        return name
    }

    /// Whether a variant, metric or event name is acceptable (see ``readName(_:at:what:_:)``).
    package static func isValidName(_ name: String) -> Bool {
        Identifier.isMadeOf(name, maximum: maximumNameCharacters, punctuation: "_-.:/")
    }

    /// "the experiment is not valid: 3 problems; the first: variants[1].condition: …".
    package static func summary(_ issues: [ValidationIssue]) -> String {
        DocumentReading.summary(issues, of: "experiment")
    }
}
