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
        } catch let error as APIError {
            throw error
        } catch let error as any HTTPResponseError {
            throw error
        } catch  where StoreErrors.isBusy(error) {
            // Any write that waited out SQLite's busy timeout: retryable, not a server fault.
            throw APIError.storageBusy()
        } catch {
            context.logger.error(
                "request failed",
                metadata: ["path": "\(request.uri.path)", "error": "\(String(describing: error))"]
            )
            throw APIError(.internalServerError, "INTERNAL", "the server failed to handle the request; see its log")
        }
    }
}
