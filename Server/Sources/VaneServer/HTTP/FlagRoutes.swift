import Hummingbird
import Logging
import VaneCore
import VaneServerCore

/// A flag's actions beside the template: the kill switch (`POST …/flags/{key}/switch`), the same
/// rule the console's "Turn off"/"Turn on" uses (``FlagSwitching``). Needs what publishing the
/// environment needs; the publish is audited like any other.
struct FlagRoutes {
    let switching: FlagSwitching

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("flags/:key/switch", use: switchFlag)
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
