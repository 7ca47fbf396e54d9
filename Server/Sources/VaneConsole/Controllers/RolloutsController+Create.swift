import Foundation
import Hummingbird
import VaneCore
import VaneServerCore

/// Creating a rollout from the console: a form with the plan's fields and their defaults, turned
/// into the JSON the API takes and read by the same ``RolloutLifecycle/create(_:in:actor:)`` and
/// ``RolloutPlanReader``; every problem comes back on the form with the field it is about.
extension RolloutsController {
    /// Parameter and guardrail rows the form offers (a plan may have more, through the API).
    static let formParameterRows = 3
    static let formGuardrailRows = 3

    struct NewRolloutPage: Sendable {
        struct ParameterRow: Sendable {
            var index: Int
            var number: Int
            var options: [SelectOption]
            var value: String
            var required: Bool
        }

        struct GuardrailRow: Sendable {
            var index: Int
            var number: Int
            var event: String
            var kinds: [SelectOption]
            var directions: [SelectOption]
            var margin: String
            var required: Bool
        }

        var action: String
        var csrf: String
        var id: String
        var description: String
        var parameters: [ParameterRow]
        var audiences: [SelectOption]
        var steps: String
        var holdMinutes: String
        var units: String
        var guardrails: [GuardrailRow]
        var onRegression: [SelectOption]
        var errorRate: String
        var problems: [String]
        var hasProblems: Bool
        var back: String
    }

    @Sendable func newRolloutPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        var fields = ConsoleForm.query(request)
        // From a flag's editor: that flag in the first row.
        if let flag = fields["flag"] { fields["p0_key"] = flag }
        return try await renderNewRollout(context: context, fields: fields, problems: [])
    }

    @Sendable func createRollout(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let (key, _, _) = try await self.environment(context)
        let form = try await ConsoleForm.read(request, context: context)
        let body = Self.plan(form.fields)
        do {
            let rollout = try await lifecycle.create(body, in: key, actor: principal.actor)
            throw ConsoleRedirect(location: Self.path(key, rollout.id) + "?done=created")
        } catch let error as RolloutTemplateError {
            return try await renderNewRollout(
                context: context,
                fields: form.fields,
                problems: error.issues.map(Self.problem)
            )
        } catch PublishError.invalid(let issues) {
            return try await renderNewRollout(
                context: context,
                fields: form.fields,
                problems: issues.filter { $0.severity == .error }.map {
                    "The new values do not fit the live template: \($0.path): \($0.message)"
                }
            )
        } catch StorageError.rolloutExists(let id) {
            return try await renderNewRollout(
                context: context,
                fields: form.fields,
                problems: [StorageError.rolloutExists(id).description]
            )
        }
    }

    private func renderNewRollout(
        context: VaneRequestContext,
        fields: [String: String],
        problems: [String]
    ) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let live = try await lifecycle.publisher.liveTemplate(key).template
        let keys = live.allParameters.map(\.key).sorted()
        // The rollouts' own conditions are not an audience.
        let conditions = live.conditions.map(\.name).filter { !$0.hasPrefix("rollout_") }
        func field(_ name: String, _ fallback: String) -> String { fields[name] ?? fallback }
        let parameters = (0..<Self.formParameterRows).map { index in
            let chosen = fields["p\(index)_key"] ?? ""
            let none = SelectOption(value: "", label: index == 0 ? "Choose a flag" : "(none)", selected: chosen.isEmpty)
            return NewRolloutPage.ParameterRow(
                index: index,
                number: index + 1,
                options: [none] + keys.map { SelectOption(value: $0, label: $0, selected: $0 == chosen) },
                value: field("p\(index)_value", ""),
                required: index == 0
            )
        }
        let guardrails = (0..<Self.formGuardrailRows).map { index in
            let kind = field("g\(index)_kind", "conversion")
            let bad = field("g\(index)_bad", "increase")
            return NewRolloutPage.GuardrailRow(
                index: index,
                number: index + 1,
                event: field("g\(index)_event", ""),
                kinds: [
                    SelectOption(
                        value: "conversion",
                        label: "Share of units with the event",
                        selected: kind == "conversion"
                    ),
                    SelectOption(value: "mean", label: "Mean value per unit", selected: kind == "mean"),
                ],
                directions: [
                    SelectOption(value: "increase", label: "More is worse", selected: bad == "increase"),
                    SelectOption(value: "decrease", label: "Less is worse", selected: bad == "decrease"),
                ],
                margin: field("g\(index)_margin", "0"),
                required: index == 0
            )
        }
        let audience = field("audience", "")
        let onRegression = field("onRegression", RolloutRegressionAction.rollBack.rawValue)
        let page = NewRolloutPage(
            action: ConsolePaths.environment(key) + "/rollouts/new",
            csrf: session.csrfToken,
            id: field("id", ""),
            description: field("description", ""),
            parameters: parameters,
            audiences: [SelectOption(value: "", label: "Everyone", selected: audience.isEmpty)]
                + conditions.map { SelectOption(value: $0, label: $0, selected: $0 == audience) },
            steps: field("steps", RolloutPlan.defaultSteps.map(RolloutPlan.percentText).joined(separator: ", ")),
            holdMinutes: field("holdMinutes", String(RolloutPlan.defaultMinimumHoldSeconds / 60)),
            units: field("units", String(RolloutPlan.defaultMinimumUnitsPerArm)),
            guardrails: guardrails,
            onRegression: [
                SelectOption(
                    value: RolloutRegressionAction.rollBack.rawValue,
                    label: "Roll back at once",
                    selected: onRegression == RolloutRegressionAction.rollBack.rawValue
                ),
                SelectOption(
                    value: RolloutRegressionAction.hold.rawValue,
                    label: "Pause and tell people",
                    selected: onRegression == RolloutRegressionAction.hold.rawValue
                ),
            ],
            errorRate: field("errorRate", String(RolloutPlan.defaultErrorRate)),
            problems: problems,
            hasProblems: !problems.isEmpty,
            back: ConsolePaths.environment(key) + "/rollouts"
        )
        return renderer.render(
            .rolloutNew,
            chrome: try await environmentChrome(
                title: "New rollout",
                user: user,
                project: project,
                environment: environment,
                tab: "rollouts"
            ),
            page: page,
            context: context,
            status: problems.isEmpty ? .ok : .badRequest
        )
    }

    /// The form's fields as the API's plan: numbers that do not read are passed on as text, so
    /// the reader names them with their field.
    static func plan(_ fields: [String: String]) -> JSONObject {
        func text(_ name: String) -> String {
            (fields[name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func number(_ text: String) -> JSONValue {
            Double(text).flatMap { $0.isFinite ? .number(JSONNumber($0)) : nil } ?? .string(text)
        }
        var object: JSONObject = ["id": .string(text("id"))]
        if !text("description").isEmpty { object["description"] = .string(text("description")) }
        object["parameters"] = .array(
            (0..<formParameterRows).compactMap { index -> JSONValue? in
                let key = text("p\(index)_key")
                guard !key.isEmpty else { return nil }
                return ["key": .string(key), "value": .string(fields["p\(index)_value"] ?? "")]
            }
        )
        object["audience"] = text("audience").isEmpty ? .null : .string(text("audience"))
        object["steps"] = .array(
            text("steps").split(whereSeparator: { $0 == "," || $0.isWhitespace }).map { number(String($0)) }
        )
        let minutes = text("holdMinutes")
        // Minutes on the form, seconds in the plan; a number too large to convert stays text for the reader.
        let seconds = Int(minutes).map { $0.multipliedReportingOverflow(by: 60) }
        object["minimumHoldSeconds"] =
            seconds.flatMap { $0.overflow ? nil : .number(JSONNumber($0.partialValue)) } ?? .string(minutes)
        object["minimumUnitsPerArm"] = Int(text("units")).map { .number(JSONNumber($0)) } ?? .string(text("units"))
        object["guardrails"] = .array(
            (0..<formGuardrailRows).compactMap { index -> JSONValue? in
                let event = text("g\(index)_event")
                guard !event.isEmpty else { return nil }
                let margin = text("g\(index)_margin")
                return [
                    "event": .string(event), "kind": .string(text("g\(index)_kind")),
                    "bad": .string(text("g\(index)_bad")),
                    "margin": margin.isEmpty ? .number(JSONNumber(0)) : number(margin),
                ]
            }
        )
        object["onRegression"] = .string(text("onRegression"))
        object["errorRate"] = number(text("errorRate"))
        return object
    }

    /// The form's name for the field of a problem's path, then the problem.
    static func problem(_ issue: ValidationIssue) -> String {
        let path = issue.path.description
        let labels: [(String, String)] = [
            ("id", "Id"), ("description", "Description"), ("parameters", "Flags and new values"),
            ("audience", "Audience"), ("steps", "Steps"), ("minimumHoldSeconds", "Hold each step"),
            ("minimumUnitsPerArm", "Units per arm"), ("guardrails", "Guardrails"),
            ("onRegression", "On a regression"), ("errorRate", "Error rate"),
        ]
        let member = path.prefix { $0 != "." && $0 != "[" }
        let label = labels.first { $0.0 == member }?.1 ?? "The plan"
        return "\(label) (\(path)): \(issue.message)"
    }
}
