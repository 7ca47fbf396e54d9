import HTTPTypes
import Hummingbird
import VaneServerCore

/// Reads the API key from `Authorization: Bearer <key>` or `X-API-Key: <key>` and sets the
/// request's ``Principal``. A request without a key passes through unauthenticated (health
/// checks need none); a request with an unknown or revoked key is refused with 401 here.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    let keys: KeyIndex

    func handle(
        _ request: Request,
        context: VaneRequestContext,
        next: (Request, VaneRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let principal = try await principal(of: request) else { return try await next(request, context) }
        var context = context
        context.principal = principal
        return try await next(request, context)
    }

    /// The principal of the request's API key; nil when it carries none.
    /// - Throws: 401 for an unknown or revoked key.
    func principal(of request: Request) async throws(APIError) -> Principal? {
        guard let secret = APIKeyCredentials.secret(in: request.headers) else { return nil }
        guard let key = await keys.authenticate(secret: secret) else {
            throw APIError.unauthenticated("the API key is unknown or revoked")
        }
        return Principal(key: key)
    }
}

extension VaneRequestContext {
    /// The caller, or 401 when the request carried no key.
    func requirePrincipal() throws(APIError) -> Principal {
        guard let principal else {
            throw APIError.unauthenticated(
                "this needs an API key: send Authorization: Bearer <key> or X-API-Key: <key>"
            )
        }
        return principal
    }
}
