import HTTPTypes
import Hummingbird
import Logging
import VaneServerCore

/// Runs around every console route: finds the person behind the session cookie, refuses
/// cross-site form posts, turns errors into pages, and adds the security headers.
struct ConsoleMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    let accounts: Accounts
    let renderer: ConsolePageRenderer

    /// The session cookie's name.
    static let cookieName = SessionToken.cookieName

    func handle(
        _ request: Request,
        context: VaneRequestContext,
        next: (Request, VaneRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        do {
            if let token = request.cookies[Self.cookieName]?.value,
                let (session, user) = try await accounts.session(token: token)
            {
                context.consoleSession = session
                context.principal = Principal(user: user)
            }
            if request.method != .get, request.method != .head {
                try Self.checkSameOrigin(request)
            }
            var response = try await next(request, context)
            for field in ConsolePageRenderer.securityHeaders where response.headers[field.name] == nil {
                response.headers.append(field)
            }
            return response
        } catch let redirect as ConsoleRedirect {
            return redirect.response
        } catch {
            return errorPage(error, request: request, context: context)
        }
    }

    /// Refuses a state-changing request another site's page made the browser send: its
    /// `Origin` (or, without one, `Sec-Fetch-Site`) must be this server. The CSRF token in every
    /// form is the second, independent check.
    static func checkSameOrigin(_ request: Request) throws(ConsolePageError) {
        if let origin = request.headers[.origin] {
            let host = request.head.authority ?? ""
            let stripped = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first
            guard let stripped, stripped == host[...] else {
                throw ConsolePageError.forbidden(
                    "this form was sent from another site (\(origin.prefix(100))); Vane refuses it"
                )
            }
            return
        }
        if let name = HTTPField.Name("Sec-Fetch-Site"), request.headers[name] == "cross-site" {
            throw ConsolePageError.forbidden("this form was sent from another site; Vane refuses it")
        }
    }

    func errorPage(_ error: any Error, request: Request, context: VaneRequestContext) -> Response {
        let page: ConsolePageError
        switch error {
        case let error as ConsolePageError: page = error
        case let error as AccessDenied: page = .forbidden(error.message)
        case let error as AccountError: page = .badRequest(error.message)
        case let refusal as ChangeRefusal:
            switch refusal {
            case .notFound: page = .notFound(refusal.description)
            case .notAllowed: page = .forbidden(refusal.description)
            default: page = ConsolePageError(status: .conflict, heading: "Not applied", message: refusal.description)
            }
        case let error as StorageError where error == .busy:
            page = ConsolePageError(
                status: .serviceUnavailable,
                heading: "The database is busy",
                message: error.description
            )
        case let error as StorageError: page = .badRequest(error.description)
        default:
            context.logger.error("console error", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            page = ConsolePageError(
                status: .internalServerError,
                heading: "Something went wrong",
                message: "The server could not show this page; the server log has the details."
            )
        }
        var response = renderer.render(
            .error,
            chrome: ConsoleChrome(title: page.heading),
            page: ErrorPage(heading: page.heading, message: page.message, back: "/", backLabel: "Back to the projects"),
            context: context,
            status: page.status
        )
        if page.status == .contentTooLarge {
            // The rest of a refused body is never read: the connection ends with the answer.
            response.headers[.connection] = "close"
            context.closeConnectionAfterResponse()
        }
        return response
    }

    struct ErrorPage: Sendable {
        var heading: String
        var message: String
        var back: String
        var backLabel: String
    }
}
