import HTTPTypes
import Hummingbird
import Logging
import VaneOIDC
import VaneServerCore

/// Sign-in through the identity provider: `GET /sign-in/oidc` sends the browser there,
/// `GET /sign-in/oidc/callback` takes it back and starts a session — the same session, cookie
/// and CSRF token as a password sign-in. Every refusal is a page saying what went wrong and
/// what to do, and sets no session cookie.
struct SingleSignOnController {
    let singleSignOn: SingleSignOn
    /// The password sign-in's controller: its session cookie and `Secure` rule.
    let account: AccountController

    /// The cookie that ties the provider's way back to the browser that left (login CSRF): `Lax`,
    /// since the provider's redirect back is a cross-site navigation a `Strict` cookie skips.
    static let stateCookieName = "vane_oidc_state"
    static let stateCookiePath = "/sign-in/oidc"

    func register(on routes: ConsoleRouteGroups) {
        routes.signedOut.get("sign-in/oidc", use: start)
        routes.signedOut.get("sign-in/oidc/callback", use: callback)
    }

    @Sendable func start(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let next = request.uri.queryParameters.get("next").flatMap { ConsolePaths.sameOriginPath(String($0)) } ?? "/"
        if context.consoleSession != nil { throw ConsoleRedirect(location: next) }
        let flow: SingleSignOn.Start
        do {
            flow = try await singleSignOn.start(next: next)
        } catch let refusal as SignInRefusal {
            return refused(refusal, request: request, context: context)
        }
        var response = ConsoleRedirect(location: flow.authorizationURL).response
        response.setCookie(stateCookie(flow.state, maxAge: 600, request: request))
        return response
    }

    @Sendable func callback(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        func text(_ name: String) -> String? { query.get(name).map { String($0) } }
        let returned = SingleSignOn.Callback(
            state: text("state"),
            code: text("code"),
            error: text("error"),
            errorDescription: text("error_description"),
            browserState: request.cookies[Self.stateCookieName]?.value
        )
        let signedIn: (user: UserAccount, next: String)
        do {
            signedIn = try await singleSignOn.finish(returned, logger: context.logger)
        } catch let refusal as SignInRefusal {
            return refused(refusal, request: request, context: context)
        }
        let (user, next) = signedIn
        let (token, _) = try await account.accounts.startSession(
            user: user,
            address: context.clientAddress,
            userAgent: request.headers[.userAgent] ?? ""
        )
        context.logger.info("signed in", metadata: ["user": "\(user.id)", "through": "single sign-on"])
        var response = ConsoleRedirect(location: next).response
        response.setCookie(
            account.sessionCookie(token, maxAge: Int(account.accounts.lifetimeMilliseconds / 1000), request: request)
        )
        response.setCookie(stateCookie("", maxAge: 0, request: request))
        return response
    }

    /// The refusal's page: what went wrong, what to do, the way back to the sign-in page; the
    /// state cookie is cleared and no session cookie is set.
    func refused(_ refusal: SignInRefusal, request: Request, context: VaneRequestContext) -> Response {
        context.logger.notice("single sign-on refused", metadata: ["reason": "\(refusal.reason.rawValue)"])
        let status: HTTPResponse.Status =
            switch refusal.reason {
            case .providerUnreachable: .badGateway
            case .unknownState, .malformedToken: .badRequest
            default: .forbidden
            }
        var response = account.renderer.render(
            .error,
            chrome: ConsoleChrome(title: "Sign-in refused"),
            page: ConsoleMiddleware.ErrorPage(
                heading: "Sign-in refused",
                message: "Vane did not sign you in: " + refusal.message + ".",
                back: "/sign-in",
                backLabel: "Back to the sign-in page"
            ),
            context: context,
            status: status
        )
        response.setCookie(stateCookie("", maxAge: 0, request: request))
        return response
    }

    func stateCookie(_ value: String, maxAge: Int, request: Request) -> Cookie {
        Cookie(
            name: Self.stateCookieName,
            value: value,
            maxAge: maxAge,
            path: Self.stateCookiePath,
            secure: account.cookiesAreSecure(request),
            httpOnly: true,
            sameSite: .lax
        )
    }
}
