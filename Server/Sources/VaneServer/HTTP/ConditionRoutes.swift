import Hummingbird
import VaneCore
import VaneServerCore

/// A condition's actions beside the template: renaming (`POST …/conditions/{name}/rename`), by the
/// same rule as the console's condition editor (``ConditionRenaming``): every conditional value
/// follows the new name. Published as the next version; needs what publishing needs.
struct ConditionRoutes {
    let publisher: TemplatePublisher

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("conditions/:name/rename", use: rename)
    }

    @Sendable func rename(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let environment = try RequestReading.environment(context)
        try principal.require(.publish(environment))
        let old = context.parameters.get("name") ?? ""
        let body = try await RequestReading.object(request)
        let new = try RequestReading.string(body, "name")
        let message = try RequestReading.optionalString(body, "message")
        let seen = try request.headers[.ifMatch].flatMap { header throws(APIError) in
            try TemplateRoutes.version(ifMatch: header, environment: environment)
        }
        let live = try await publisher.liveTemplate(environment)
        if let seen, seen != live.version {
            throw APIError.failedPrecondition(
                "version \(live.version) is live, not \(seen): someone published since; read the template and rename again"
            )
        }
        var template = try ConditionRenaming.renaming(old, to: new, in: live.template)
        template.version = TemplateVersion(
            description: String((message ?? "Rename condition \(old) to \(new)").prefix(500))
        )
        let served = try await publisher.publish(
            try publisher.check(template),
            to: environment,
            expectedVersion: live.version,
            actor: principal.actor
        )
        return JSONResponse.make(text: served.templateJSON, headers: [.eTag: served.etag])
    }
}
