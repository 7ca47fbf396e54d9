import Foundation
import VaneCore

/// What the provider's discovery document (`/.well-known/openid-configuration`) tells Vane.
package struct ProviderMetadata: Sendable, Equatable {
    package var issuer: String
    package var authorizationEndpoint: String
    package var tokenEndpoint: String
    package var jwksURI: String
    /// How the token endpoint takes the client secret; nil: not said (`client_secret_basic`).
    package var tokenEndpointAuthMethods: [String]?

    /// Reads a discovery document and checks it names the configured issuer.
    /// - Throws: ``SignInRefusal`` (provider unreachable: the document is not usable).
    package init(document: [UInt8], configuredIssuer: String) throws(SignInRefusal) {
        guard let object = (try? JSONValue.parse(document))?.objectValue else {
            throw SignInRefusal(
                .providerUnreachable,
                "the identity provider's discovery document is not JSON; check the issuer setting (\(configuredIssuer))"
            )
        }
        func url(_ key: String) throws(SignInRefusal) -> String {
            guard let text = object[key]?.stringValue, ProviderURL.problem(text) == nil else {
                throw SignInRefusal(
                    .providerUnreachable,
                    "the identity provider's discovery document has no usable \(key) (an https URL); check the issuer setting"
                )
            }
            return text
        }
        issuer = try url("issuer")
        guard Self.trimmed(issuer) == Self.trimmed(configuredIssuer) else {
            throw SignInRefusal(
                .wrongIssuer,
                "the discovery document at \(configuredIssuer) names the issuer \(issuer.prefix(200)); set the issuer to exactly that"
            )
        }
        authorizationEndpoint = try url("authorization_endpoint")
        tokenEndpoint = try url("token_endpoint")
        jwksURI = try url("jwks_uri")
        tokenEndpointAuthMethods = object["token_endpoint_auth_methods_supported"]?.arrayValue?.compactMap(
            \.stringValue
        )
        if let methods = object["code_challenge_methods_supported"]?.arrayValue?.compactMap(\.stringValue),
            !methods.contains("S256")
        {
            throw SignInRefusal(
                .providerUnreachable,
                "the identity provider does not support PKCE with S256 (code_challenge_methods_supported: \(methods.joined(separator: ", "))); turn PKCE on for the client at the provider"
            )
        }
    }

    /// An issuer without one trailing slash (the discovery URL appends to it).
    static func trimmed(_ issuer: String) -> String {
        issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
    }

    /// The discovery document's URL for an issuer.
    package static func discoveryURL(issuer: String) -> String {
        trimmed(issuer) + "/.well-known/openid-configuration"
    }
}
