import VaneAuthoring
import VaneCore
import VaneServerCore

/// The console's form for a new experiment: what it shows (the live template's parameters and
/// percent conditions to choose from) and the definition it sends, the same JSON object
/// `POST …/experiments` reads, so both are read and refused by ``ExperimentLifecycle/create(_:in:actor:)``.
struct ExperimentForm: Sendable {
    /// Variant rows the form offers; the first is control.
    static let variantRows = 4
    /// Metric rows: the primary metric and two guardrails.
    static let metricRows = 3

    struct Choice: Sendable {
        var id: String
        var name: String
        var checked: Bool
    }

    typealias Option = SelectOption

    struct VariantRow: Sendable {
        var index: Int
        var legend: String
        var name: String
        var weight: String
        var conditions: [Option]
    }

    struct MetricRow: Sendable {
        var index: Int
        var legend: String
        var event: String
        var denominator: String
        var kinds: [Option]
    }

    struct Problem: Sendable {
        var path: String
        var message: String
    }

    var key: String
    var hypothesis: String
    var parameters: [Choice]
    var hasParameters: Bool
    var variants: [VariantRow]
    /// The live template has a percent condition to choose.
    var hasSplits: Bool
    var metrics: [MetricRow]
    var methods: [Option]
    var confidenceLevel: String
    var problems: [Problem]
    var problemSummary: String?
    var action: String
    var csrf: String
    var conditionsHref: String
    var listHref: String

    /// The form, filled with `fields` (empty for a new form), on the live template.
    init(
        template: ConfigTemplate,
        fields: [String: String],
        problems: [ValidationIssue],
        action: String,
        csrf: String,
        conditionsHref: String,
        listHref: String
    ) {
        func field(_ name: String) -> String { fields[name] ?? "" }
        key = field("key")
        hypothesis = field("hypothesis")
        parameters = template.allParameters.enumerated().map { index, parameter in
            Choice(
                id: "parameter-\(index)",
                name: parameter.key,
                checked: fields["parameter." + parameter.key] != nil
            )
        }
        hasParameters = !parameters.isEmpty
        // Only random splits can be variants (ExperimentTemplateCheck refuses the rest).
        let splits = template.conditions.map(ParsedCondition.init).filter(ExperimentTemplateCheck.isRandomSplit)
        hasSplits = !splits.isEmpty
        variants = (0..<Self.variantRows).map { index in
            let chosen = field("variant.\(index).condition")
            let none = Option(
                value: "",
                label: "none: units that match no other variant's condition",
                selected: chosen.isEmpty
            )
            return VariantRow(
                index: index,
                legend: index == 0 ? "Variant 1 (control)" : "Variant \(index + 1)",
                name: fields["variant.\(index).name"] ?? (index == 0 ? "control" : ""),
                weight: fields["variant.\(index).weight"] ?? (index < 2 ? "50" : ""),
                conditions: [none]
                    + splits.map { condition in
                        Option(
                            value: condition.name,
                            label: "\(condition.name): \(condition.expression?.expressionText ?? "")",
                            selected: chosen == condition.name
                        )
                    }
            )
        }
        metrics = (0..<Self.metricRows).map { index in
            let kind = fields["metric.\(index).kind"] ?? "conversion"
            return MetricRow(
                index: index,
                legend: index == 0 ? "Primary metric (decides the experiment)" : "Guardrail metric \(index) (optional)",
                event: field("metric.\(index).event"),
                denominator: field("metric.\(index).denominator"),
                kinds: ExperimentMetric.Kind.allCases.map { option in
                    Option(value: option.rawValue, label: Self.kindLabel(option), selected: option.rawValue == kind)
                }
            )
        }
        let method = fields["method"] ?? ExperimentMethod.sequential.rawValue
        methods = [
            Option(
                value: ExperimentMethod.sequential.rawValue,
                label: "Sequential: always-valid p-values, safe to look at daily",
                selected: method == ExperimentMethod.sequential.rawValue
            ),
            Option(
                value: ExperimentMethod.bayesian.rawValue,
                label: "Bayesian: chance to beat control and expected loss",
                selected: method == ExperimentMethod.bayesian.rawValue
            ),
        ]
        confidenceLevel = fields["confidenceLevel"] ?? "0.95"
        self.problems = problems.map { Problem(path: $0.path.description, message: $0.message) }
        problemSummary =
            problems.isEmpty
            ? nil
            : "The experiment was not created: \(problems.count == 1 ? "1 problem" : "\(problems.count) problems")."
        self.action = action
        self.csrf = csrf
        self.conditionsHref = conditionsHref
        self.listHref = listHref
    }

    private static func kindLabel(_ kind: ExperimentMetric.Kind) -> String {
        switch kind {
        case .conversion: "conversion: share of units with the event"
        case .mean: "mean: the events' values per unit"
        case .ratio: "ratio: the events' values over another event's"
        }
    }

    /// The definition the fields describe, as the API's JSON: empty rows are left out, and a
    /// value that is not what the reader expects is passed on as text so the reader names it.
    static func definition(_ form: ConsoleForm, template: ConfigTemplate) -> JSONObject {
        var object: JSONObject = [:]
        object["key"] = .string(form.text("key") ?? "")
        if let hypothesis = form.text("hypothesis") { object["hypothesis"] = .string(hypothesis) }
        object["parameters"] = .array(
            template.allParameters.filter { form.fields["parameter." + $0.key] != nil }.map { .string($0.key) }
        )
        var variants: [JSONValue] = []
        for index in 0..<variantRows {
            let name = form.text("variant.\(index).name")
            let condition = form.text("variant.\(index).condition")
            guard name != nil || condition != nil else { continue }
            var variant: JSONObject = ["name": .string(name ?? "")]
            if let condition { variant["condition"] = .string(condition) }
            variant["weight"] = number(form.text("variant.\(index).weight"))
            variants.append(.object(variant))
            if index == 0, let name { object["controlVariant"] = .string(name) }
        }
        object["variants"] = .array(variants)
        var guardrails: [JSONValue] = []
        for index in 0..<metricRows {
            guard let event = form.text("metric.\(index).event") else { continue }
            let kind = form.text("metric.\(index).kind") ?? ExperimentMetric.Kind.conversion.rawValue
            var metric: JSONObject = ["event": .string(event), "kind": .string(kind)]
            if kind == ExperimentMetric.Kind.ratio.rawValue {
                metric["denominatorEvent"] = .string(form.text("metric.\(index).denominator") ?? "")
            }
            if index == 0 { object["primaryMetric"] = .object(metric) } else { guardrails.append(.object(metric)) }
        }
        if !guardrails.isEmpty { object["guardrailMetrics"] = .array(guardrails) }
        if let method = form.text("method") { object["method"] = .string(method) }
        if let level = form.text("confidenceLevel") { object["confidenceLevel"] = number(level) }
        return object
    }

    /// A number as JSON, or the text itself when it is not one (the reader then says what it expected).
    private static func number(_ text: String?) -> JSONValue {
        guard let text else { return .null }
        return JSONNumber(text: text).map(JSONValue.number) ?? .string(text)
    }
}
