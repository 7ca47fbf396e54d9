import Foundation
import Hummingbird
import Logging
import VaneAuthoring
import VaneCore
import VaneServerCore

/// A flag's actions beside the template: the kill switch (`POST …/flags/{key}/switch`), the same
/// rule the console's "Turn off"/"Turn on" uses (``FlagSwitching``). Needs what publishing the
/// environment needs; the publish is audited like any other.
///
/// Copying a flag to another environment (`POST …/flags/{key}/copy`, ``FlagCopying``) answers the
/// target's live template with the flag copied in, its diff and its impact sample, for the caller
/// to publish there (the console puts it into the person's draft instead).
struct FlagRoutes {
    let switching: FlagSwitching
    let drafts: DraftStore

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("flags/:key/switch", use: switchFlag)
        group.post("flags/:key/copy", use: copyFlag)
    }

    @Sendable func copyFlag(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let source = try RequestReading.environment(context)
        try principal.require(.readTemplate(source))
        let flag = context.parameters.get("key") ?? ""
        let body = try await RequestReading.object(request)
        let target = EnvironmentKey(projectId: source.projectId, environmentId: try RequestReading.string(body, "to"))
        guard target != source else { throw FlagCopyRefusal.sameEnvironment }
        try principal.require(.publish(target))
        let from = try await switching.publisher.liveTemplate(source)
        let into = try await switching.publisher.liveTemplate(target)
        let copy = try FlagCopying.copy(flag, from: from.template, into: into.template)
        let diff = TemplateDiff(from: into.template, to: copy.template)
        let saved = try await drafts.savedContexts(projectId: target.projectId)
        let impact = ValueChangeSample.estimate(
            from: into.template,
            to: copy.template,
            diff: diff,
            savedContexts: saved,
            at: Date()
        )
        let answer: JSONValue = [
            "flag": .string(flag),
            "to": .string(target.environmentId),
            "versionNumber": .string(String(into.version)),
            "replaced": .bool(copy.replaced),
            "addedConditions": .array(copy.addedConditions.map(JSONValue.string)),
            "changes": diff.json(),
            "impact": .object(impact.impactJSON(versionNumber: into.version)),
            "template": copy.template.json(),
        ]
        return JSONResponse.make(answer, headers: [.eTag: ServedTemplate.etag(target, version: into.version)])
    }

    @Sendable func switchFlag(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let flag = context.parameters.get("key") ?? ""
        let body = try await RequestReading.object(request)
        let position = try FlagSwitching.Position(try RequestReading.string(body, "to"))
        let seen = try request.headers[.ifMatch].flatMap { header throws(APIError) in
            try TemplateRoutes.version(ifMatch: header, environment: environment)
        }
        let plan = try await switching.plan(environment, flag: flag, to: position)
        if RequestReading.validateOnly(request) {
            if let seen, seen != plan.version {
                throw FlagSwitchRefusal.versionMoved(seen: seen, live: plan.version)
            }
            return response(plan, version: plan.version, published: false)
        }
        let result = try await switching.publish(
            plan,
            message: try RequestReading.optionalString(body, "message") ?? "",
            seenVersion: seen,
            actor: principal.actor
        )
        context.logger.info(
            "kill switch",
            metadata: [
                "environment": "\(environment)", "flag": "\(flag)", "to": "\(position.rawValue)",
                "version": "\(result.version)", "by": "\(principal.id)",
            ]
        )
        return response(plan, version: result.version, published: result.published)
    }

    /// The switch's answer: what changed (or would), and the version that is live after it.
    func response(_ plan: FlagSwitching.Plan, version: Int64, published: Bool) -> Response {
        func value(_ value: ParameterValue?) -> JSONValue { value.map { .object($0.json) } ?? .null }
        let changes: [JSONValue] = plan.changes.map { change in
            var object: JSONObject = ["before": value(change.before), "after": value(change.after)]
            if let condition = change.condition { object["condition"] = .string(condition) }
            return .object(object)
        }
        let body: JSONValue = [
            "flag": .string(plan.flag),
            "to": .string(plan.position.rawValue),
            "published": .bool(published),
            "versionNumber": .string(String(version)),
            "realtime": .bool(plan.realtime),
            "changes": .array(changes),
        ]
        return JSONResponse.make(body, headers: [.eTag: ServedTemplate.etag(plan.environment, version: version)])
    }
}
