import Hummingbird
import VaneServerCore

/// Lets a request through only for a signed-in person: everyone else goes to the sign-in page
/// (coming back afterwards), and a person who must choose a new password to their account page.
/// Every console route but sign-in, sign-out and the static files sits behind it, so a handler
/// cannot forget the check; handlers take the person from ``VaneRequestContext/signedIn()``.
///
/// Being signed in is also the viewer's role: every account that can sign in (a disabled one
/// cannot) may read every page.
struct ConsoleSignInMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    /// Whether a person who must choose a new password may use the routes (their account page).
    var allowsPasswordChange = false

    func handle(
        _ request: Request,
        context: VaneRequestContext,
        next: (Request, VaneRequestContext) async throws -> Response
    ) async throws -> Response {
        guard case .user(let user)? = context.principal?.identity, context.consoleSession != nil else {
            throw ConsoleRedirect.signIn(next: request.uri.string)
        }
        if user.mustChangePassword, !allowsPasswordChange {
            throw ConsoleRedirect(location: "/account")
        }
        return try await next(request, context)
    }
}

extension VaneRequestContext {
    /// The signed-in person of a console route, whom ``ConsoleSignInMiddleware`` let through.
    /// - Throws: ``ConsoleRedirect`` to the sign-in page on a route registered outside that
    ///   middleware (ConsoleAccessTests fails for such a route).
    func signedIn() throws(ConsoleRedirect) -> (user: UserAccount, session: UserSession, principal: Principal) {
        guard let principal, case .user(let user) = principal.identity, let consoleSession else {
            throw ConsoleRedirect(location: "/sign-in")
        }
        return (user, consoleSession, principal)
    }
}
