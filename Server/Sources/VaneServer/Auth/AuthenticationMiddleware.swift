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
        // Plain string slicing and the first field as it came (no joining of repeated fields):
        // this runs on every request.
        if let authorization = headers.first(where: { $0.name == .authorization })?.value {
            let utf8 = authorization.utf8
            let scheme = Array("bearer ".utf8)
            // ASCII case-insensitive "Bearer " prefix, then the token without surrounding spaces.
            if utf8.count > scheme.count, zip(utf8, scheme).allSatisfy({ $0 | 0x20 == $1 }) {
                var token = Substring(authorization).dropFirst(scheme.count)
                while token.first == " " { token = token.dropFirst() }
                while token.last == " " { token = token.dropLast() }
                return token.isEmpty ? nil : String(token)
            }
        }
        if let key = headers.first(where: { $0.name == apiKeyHeader })?.value, !key.isEmpty { return key }
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
