import Foundation
import HTTPTypes
import Hummingbird

/// Reads the API key from `Authorization: Bearer <key>` or `X-API-Key: <key>` and sets the
/// request's ``Principal``. A request without a key passes through unauthenticated (health
/// checks need none); a request with an unknown or revoked key is refused with 401 here.
public struct AuthenticationMiddleware: RouterMiddleware {
    /// The request context.
    public typealias Context = VaneRequestContext

    let keys: KeyIndex

    /// The header some clients use instead of `Authorization`.
    public static let apiKeyHeader = HTTPField.Name("X-API-Key")

    /// Creates the middleware.
    public init(keys: KeyIndex) {
        self.keys = keys
    }

    /// Authenticates the request.
    public func handle(
        _ request: Request,
        context: VaneRequestContext,
        next: (Request, VaneRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let secret = Self.secret(in: request.headers) else { return try await next(request, context) }
        guard let key = await keys.authenticate(secret: secret) else {
            throw APIError.unauthenticated("the API key is unknown or revoked")
        }
        var context = context
        context.principal = Principal(key: key)
        return try await next(request, context)
    }

    /// The presented secret, if any.
    static func secret(in headers: HTTPFields) -> String? {
        if let authorization = headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                let token = parts[1].trimmingCharacters(in: .whitespaces)
                return token.isEmpty ? nil : token
            }
        }
        if let apiKeyHeader, let key = headers[apiKeyHeader], !key.isEmpty { return key }
        return nil
    }
}

extension VaneRequestContext {
    /// The caller, or 401 when the request carried no key.
    public func requirePrincipal() throws(APIError) -> Principal {
        guard let principal else {
            throw APIError.unauthenticated(
                "this needs an API key: send Authorization: Bearer <key> or X-API-Key: <key>"
            )
        }
        return principal
    }
}
