import Foundation
import HTTPTypes
import Hummingbird
import Logging
import VaneServerCore

/// Signing in and out, and a person's own account page.
struct AccountController: ConsolePages {
    let accounts: Accounts
    let store: ConfigStore
    let renderer: ConsolePageRenderer
    /// Whether session cookies get `Secure` (the server terminates TLS itself).
    let secureCookies: Bool
    /// The identity provider's name on the sign-in page's button; nil without single sign-on.
    var singleSignOnName: String? = nil

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.signedOut.get("sign-in", use: signInPage)
        routes.signedOut.post("sign-in", use: signIn)
        routes.signedOut.post("sign-out", use: signOut)
        routes.account.get("account", use: accountPage)
        routes.account.post("account/password", use: changePassword)
        routes.account.post("account/sign-out-everywhere", use: signOutEverywhere)
    }

    struct SignInPage: Sendable {
        var next: String
        var email: String
        var error: String?
        /// "Sign in with <provider>" and its link, with single sign-on.
        var singleSignOn: SingleSignOnButton?
        /// Whether the password form is shown (not when password sign-in is off for everyone).
        var passwordForm = true
        /// Whether only the break-glass admin may use the password form.
        var breakGlassOnly = false
    }

    struct SingleSignOnButton: Sendable {
        var name: String
        var href: String
    }

    func signInPage(next: String, email: String, error: String?) -> SignInPage {
        var breakGlassOnly = false
        if case .breakGlassOnly = accounts.passwordSignIn { breakGlassOnly = true }
        return SignInPage(
            next: next,
            email: email,
            error: error,
            singleSignOn: singleSignOnName.map {
                SingleSignOnButton(name: $0, href: "/sign-in/oidc?next=" + ConsolePaths.encodeQueryValue(next))
            },
            passwordForm: accounts.passwordSignIn.isOffered,
            breakGlassOnly: breakGlassOnly
        )
    }

    @Sendable func signInPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let next = request.uri.queryParameters.get("next").flatMap { ConsolePaths.sameOriginPath(String($0)) } ?? "/"
        if context.consoleSession != nil { throw ConsoleRedirect(location: next) }
        return renderer.render(
            .signIn,
            chrome: ConsoleChrome(title: "Sign in"),
            page: signInPage(next: next, email: "", error: nil),
            context: context
        )
    }

    @Sendable func signIn(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let fields = try await ConsoleForm.readFields(request, context: context)
        let email = fields["email"] ?? ""
        let next = fields["next"].flatMap(ConsolePaths.sameOriginPath) ?? "/"
        let signIn: Accounts.SignIn
        do {
            signIn = try await accounts.signIn(
                email: email,
                password: fields["password"] ?? "",
                address: context.clientAddress,
                userAgent: request.headers[.userAgent] ?? "",
                deviceCookie: request.cookies[DeviceCookie.name]?.value
            )
        } catch let error as AccountError {
            var response = renderer.render(
                .signIn,
                chrome: ConsoleChrome(title: "Sign in"),
                page: signInPage(next: next, email: String(email.prefix(254)), error: error.message),
                context: context,
                status: {
                    if case .throttled = error.kind { return .tooManyRequests }
                    return .unauthorized
                }()
            )
            if case .throttled(let seconds) = error.kind { response.headers[.retryAfter] = String(seconds) }
            return response
        }
        context.logger.info("signed in", metadata: ["user": "\(signIn.user.id)"])
        var response = ConsoleRedirect(location: signIn.user.mustChangePassword ? "/account" : next).response
        response.setCookie(
            sessionCookie(signIn.token, maxAge: Int(accounts.lifetimeMilliseconds / 1000), request: request)
        )
        // Later sign-ins from this browser count against this cookie, not the account.
        response.setCookie(
            Cookie(
                name: DeviceCookie.name,
                value: signIn.deviceCookie,
                maxAge: DeviceCookie.maximumAgeSeconds,
                path: DeviceCookie.path,
                secure: cookiesAreSecure(request),
                httpOnly: true,
                sameSite: .strict
            )
        )
        return response
    }

    /// The session cookie: script cannot read it, other sites' requests do not carry it, and
    /// over HTTPS it never travels in clear text.
    func sessionCookie(_ value: String, maxAge: Int, request: Request) -> Cookie {
        Cookie(
            name: ConsoleMiddleware.cookieName,
            value: value,
            maxAge: maxAge,
            path: "/",
            secure: cookiesAreSecure(request),
            httpOnly: true,
            sameSite: .strict
        )
    }

    /// Whether the console's cookies get `Secure`: the server terminates TLS, or a proxy that
    /// does says the browser used HTTPS (`X-Forwarded-Proto`; a client that sends it over plain
    /// HTTP only makes its own cookies stricter).
    func cookiesAreSecure(_ request: Request) -> Bool {
        secureCookies || HTTPField.Name("X-Forwarded-Proto").flatMap { request.headers[$0] } == "https"
    }

    @Sendable func signOut(_ request: Request, context: VaneRequestContext) async throws -> Response {
        guard context.consoleSession != nil else { throw ConsoleRedirect(location: "/sign-in") }
        _ = try await ConsoleForm.read(request, context: context)
        if let session = context.consoleSession { try await accounts.store.deleteSession(tokenHash: session.tokenHash) }
        var response = ConsoleRedirect(location: "/sign-in").response
        response.setCookie(sessionCookie("", maxAge: 0, request: request))
        return response
    }

    @Sendable func signOutEverywhere(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        try await accounts.store.deleteSessions(userId: user.id)
        var response = ConsoleRedirect(location: "/sign-in").response
        response.setCookie(sessionCookie("", maxAge: 0, request: request))
        return response
    }

    struct AccountPage: Sendable {
        struct Session: Sendable {
            var created: String
            var lastSeen: String
            var address: String
            var userAgent: String
            var current: Bool
        }

        var name: String
        var email: String
        var role: String
        var mustChange: Bool
        /// Whether the password form is shown: not to someone who signs in only through single
        /// sign-on (``Accounts/mayUsePassword(_:)``).
        var passwordForm: Bool
        var csrf: String
        var minimumLength = PasswordHasher.minimumLength
        var sessions: [Session]
        var error: String?
    }

    @Sendable func accountPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        return try await renderAccount(user: user, session: session, context: context, error: nil, flash: nil)
    }

    func renderAccount(
        user: UserAccount,
        session: UserSession,
        context: VaneRequestContext,
        error: String?,
        flash: ConsoleChrome.Flash?
    ) async throws -> Response {
        let sessions = try await accounts.store.sessions(userId: user.id).map {
            AccountPage.Session(
                created: Self.displayTime($0.createTime),
                lastSeen: Self.displayTime($0.lastSeenTime),
                address: $0.address,
                userAgent: $0.userAgent,
                current: $0.tokenHash == session.tokenHash
            )
        }
        return renderer.render(
            .account,
            chrome: chrome("Your account", user: user, section: nil, flash: flash),
            page: AccountPage(
                name: user.name,
                email: user.email,
                role: user.role.rawValue,
                mustChange: user.mustChangePassword,
                passwordForm: accounts.mayUsePassword(user),
                csrf: session.csrfToken,
                sessions: sessions,
                error: error
            ),
            context: context,
            status: error == nil ? .ok : .badRequest
        )
    }

    @Sendable func changePassword(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let new = form.fields["new"] ?? ""
        guard new == form.fields["repeat"] else {
            return try await renderAccount(
                user: user,
                session: session,
                context: context,
                error: "the two new passwords differ",
                flash: nil
            )
        }
        do {
            try await accounts.changePassword(
                user: user,
                session: session,
                current: form.fields["current"] ?? "",
                new: new
            )
        } catch let error as AccountError {
            return try await renderAccount(
                user: user,
                session: session,
                context: context,
                error: error.message,
                flash: nil
            )
        }
        var changed = user
        changed.mustChangePassword = false
        var context = context
        context.principal = Principal(user: changed)
        return try await renderAccount(
            user: changed,
            session: session,
            context: context,
            error: nil,
            flash: .ok("Your password is changed. Every other session is signed out.")
        )
    }
}
