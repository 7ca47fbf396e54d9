package import HTTPTypes

/// Where a request carries its API key: `Authorization: Bearer <key>` or `X-API-Key: <key>`.
/// Read by the authentication middleware and by OFREP, which authenticates on its own.
package enum APIKeyCredentials {
    /// The header some clients use instead of `Authorization`.
    package static let apiKeyHeader = HTTPField.Name("X-API-Key")

    /// The presented secret, if any.
    package static func secret(in headers: HTTPFields) -> String? {
        // Plain string slicing and the first field as it came (no joining of repeated fields):
        // this runs on every request.
        if let authorization = headers.first(where: { $0.name == .authorization })?.value {
            let utf8 = authorization.utf8
            let scheme = "bearer ".utf8  // a view of a literal: no array per request
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
