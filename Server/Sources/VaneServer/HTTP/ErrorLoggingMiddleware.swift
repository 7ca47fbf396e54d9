import Hummingbird
import Logging
import VaneServerCore

/// Logs unexpected errors (not API errors, which are answers) without any request headers, so no
/// key ever reaches the logs.
struct ErrorLoggingMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            throw Self.answer(to: error, of: request, context: context)
        }
    }

    /// What a request that failed with `error` answers: API and HTTP errors as they are, anything
    /// else logged (without headers) and turned into a 500.
    static func answer(to error: any Error, of request: Request, context: Context) -> any Error {
        switch error {
        case let error as APIError: return error
        case let error as any HTTPResponseError: return error
        case _ where StoreErrors.isBusy(error):
            // Any write that waited out SQLite's busy timeout: retryable, not a server fault.
            return APIError.storageBusy()
        default:
            context.logger.error(
                "request failed",
                metadata: ["path": "\(request.uri.path)", "error": "\(String(describing: error))"]
            )
            return APIError(.internalServerError, "INTERNAL", "the server failed to handle the request; see its log")
        }
    }
}
