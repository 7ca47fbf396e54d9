import Foundation
import Hummingbird
import VaneCore
import VaneServerCore

/// Evaluations the console shows, over the API; each needs what reading the template needs.
/// * "Who gets what" (`POST …/evaluate`): every key's value for one context in the live template,
///   with why, optionally beside another environment's (``ContextEvaluation``).
/// * A template's impact (`POST …/template/impact`): per key, how many of a sample of users would
///   get another value if it were published (``ValueChangeSample``, as the console's review counts).
struct EvaluationRoutes {
    let publisher: TemplatePublisher
    let drafts: DraftStore

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("evaluate", use: evaluate)
        group.post("template/impact", use: impact)
    }

    @Sendable func impact(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require(.readTemplate(environment))
        let live = try await publisher.liveTemplate(environment)
        let bytes = try await RequestReading.body(request, limit: ServerLimits.maximumTemplateBytes)
        let candidate: ConfigTemplate
        do {
            candidate = try ConfigTemplate(data: bytes)
        } catch {
            throw APIError.invalidArgument(
                "the template cannot be read: \(error.issues.count) problem(s)",
                details: error.issues
            )
        }
        let saved = try await drafts.savedContexts(projectId: environment.projectId)
        let result = ValueChangeSample.estimate(from: live.template, to: candidate, savedContexts: saved, at: Date())
        if case .doesNotCompile = result {
            do {
                _ = try CompiledTemplate(candidate)
            } catch {
                throw APIError.invalidArgument(
                    "the template does not compile: \(error.issues.count) condition(s) do not parse",
                    details: error.issues
                )
            }
            throw APIError.invalidArgument("the template does not compile")
        }
        return JSONResponse.make(.object(result.impactJSON(versionNumber: live.version)))
    }

    @Sendable func evaluate(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.readTemplate(environment))
        let body = try await RequestReading.object(request)
        let evaluationContext: EvaluationContext
        do {
            evaluationContext = try EvaluationContext(
                json: body["context"] ?? .object([:]),
                at: JSONPath.root.appending("context")
            )
        } catch {
            throw APIError.invalidArgument(
                "the context cannot be read: \(error.issues.count) problem(s)",
                details: error.issues
            )
        }
        let live = try await publisher.liveTemplate(environment)
        var other: (environment: EnvironmentKey, template: ConfigTemplate, version: Int64)?
        if let id = try RequestReading.optionalString(body, "compareEnvironment") {
            let key = EnvironmentKey(projectId: environment.projectId, environmentId: id)
            try principal.require(.readTemplate(key))
            let template = try await publisher.liveTemplate(key)
            other = (key, template.template, template.version)
        }
        let rows: [ContextEvaluation.Row]
        do {
            rows = try ContextEvaluation.rows(
                context: evaluationContext,
                template: live.template,
                comparedWith: other?.template
            )
        } catch {
            // Every stored version compiles (it is compiled before it is stored); a version an
            // older server stored may not.
            throw APIError.failedPrecondition("a live template does not compile: \(error)")
        }
        var object: JSONObject = [
            "versionNumber": .string(String(live.version)),
            "keys": .array(rows.map { Self.json($0) }),
        ]
        if let other {
            object["compareEnvironment"] = .string(other.environment.environmentId)
            object["compareVersionNumber"] = .string(String(other.version))
        }
        return JSONResponse.make(.object(object))
    }

    /// A key's row: its outcome's members, and in compare mode `compare` and `differs`.
    static func json(_ row: ContextEvaluation.Row) -> JSONValue {
        var object: JSONObject = ["key": .string(row.key)]
        if let title = row.title { object["title"] = .string(title) }
        for member in json(row.outcome) { object[member.key] = member.value }
        if let other = row.other {
            object["compare"] = .object(json(other))
            object["differs"] = .bool(row.differs)
        }
        return .object(object)
    }

    /// `value`, `source`, `reason`, then `condition`, `expression` and `managed` when they apply;
    /// a key the template lacks has `reason: notInTemplate` and no value.
    static func json(_ outcome: ContextEvaluation.Outcome) -> JSONObject {
        guard let explanation = outcome.explanation else {
            return ["value": .null, "source": .string("none"), "reason": .string("notInTemplate")]
        }
        var object = explanation.json
        if let expression = outcome.expression { object["expression"] = .string(expression) }
        return object
    }
}
