import Hummingbird
import VaneServerCore

/// Refuses (403, as an error page) a signed-in person whose role does not allow a group of
/// console routes, before the handler runs or the form is read. It sits inside
/// ``ConsoleSignInMiddleware``; viewers need no check of their own (signing in is enough).
struct ConsoleRoleMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    /// What the routes behind the middleware need.
    enum Requirement: Sendable {
        /// Publishing in the environment the path names (`:project`, `:environment`): editors
        /// granted it and admins.
        case editorOfEnvironment
        /// Administering keys and people: admins.
        case admin
    }

    let requirement: Requirement

    func handle(
        _ request: Request,
        context: VaneRequestContext,
        next: (Request, VaneRequestContext) async throws -> Response
    ) async throws -> Response {
        let principal = try context.signedIn().principal
        switch requirement {
        case .admin:
            try principal.require(.administer)
        case .editorOfEnvironment:
            guard let projectId = context.parameters.get("project"),
                let environmentId = context.parameters.get("environment")
            else { throw ConsolePageError.notFound("the address names no environment") }
            try principal.require(.publish(EnvironmentKey(projectId: projectId, environmentId: environmentId)))
        }
        return try await next(request, context)
    }
}
