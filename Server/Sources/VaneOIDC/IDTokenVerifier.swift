import Foundation
import JWTKit
package import VaneCore
import VaneServerCore

/// Checks an ID token the way OpenID Connect Core 1.0, section 3.1.3.7, asks: a JWS signed with
/// one of the provider's published keys (never `none` or a shared-secret algorithm), from the
/// configured issuer, for this client, within its time (with a small leeway for clocks), and
/// carrying this sign-in's nonce.
package struct IDTokenVerifier: Sendable {
    package var issuer: String
    package var clientId: String
    package var keys: ProviderKeys
    /// Seconds two clocks may differ.
    package var leewaySeconds: Double = 60

    /// The algorithms a provider's token may use: public-key signatures only.
    static let algorithms: Set<String> = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
    ]

    package init(issuer: String, clientId: String, keys: ProviderKeys, leewaySeconds: Double = 60) {
        self.issuer = issuer
        self.clientId = clientId
        self.keys = keys
        self.leewaySeconds = leewaySeconds
    }

    /// The token's claims, once every check has passed.
    /// - Parameter now: Seconds since 1970.
    /// - Throws: ``SignInRefusal`` naming the first check that failed.
    package func verify(_ token: String, nonce: String, now: Double) async throws(SignInRefusal) -> JSONObject {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let header = (try? JSONValue.parse(headerBytes))?.objectValue,
            let payloadBytes = Base64URL.decode(parts[1]),
            let claims = (try? JSONValue.parse(payloadBytes))?.objectValue
        else {
            throw SignInRefusal(.malformedToken, "the identity provider sent an ID token that is not a signed JWT")
        }
        let algorithm = header["alg"]?.stringValue ?? ""
        guard Self.algorithms.contains(algorithm) else {
            throw SignInRefusal(
                .badSignature,
                "the ID token is signed with \"\(algorithm.prefix(20))\"; Vane accepts only public-key signatures (RS256, ES256, …): set the client's signing algorithm at the provider"
            )
        }
        let keyId = header["kid"]?.stringValue
        let collection = try await keys.keys(for: keyId)
        do {
            _ = try await collection.verify(token, as: SignatureOnly.self)
        } catch {
            throw SignInRefusal(
                .badSignature,
                "the ID token's signature does not match the identity provider's key \"\((keyId ?? "").prefix(80))\"; the token was altered or is not from this provider"
            )
        }
        try check(claims, nonce: nonce, now: now)
        return claims
    }

    /// The claim checks, after the signature.
    func check(_ claims: JSONObject, nonce: String, now: Double) throws(SignInRefusal) {
        guard let tokenIssuer = claims["iss"]?.stringValue, tokenIssuer == issuer else {
            throw SignInRefusal(
                .wrongIssuer,
                "the ID token was issued by \"\((claims["iss"]?.stringValue ?? "nobody").prefix(200))\", not by the configured identity provider \(issuer); check the issuer setting"
            )
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 255 else {
            throw SignInRefusal(.malformedToken, "the ID token names no subject (sub)")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let audience)?: audiences = [audience]
        case .array(let items)?: audiences = items.compactMap(\.stringValue)
        default: audiences = []
        }
        guard audiences.contains(clientId) else {
            throw SignInRefusal(
                .wrongAudience,
                "the ID token is meant for \(audiences.isEmpty ? "no client" : audiences.map { "\"\($0.prefix(100))\"" }.joined(separator: ", ")), not for Vane's client id \"\(clientId)\"; check the client id setting"
            )
        }
        // With several audiences, the authorized party must be this client (Core 3.1.3.7, 4–5).
        if audiences.count > 1 || claims["azp"] != nil, claims["azp"]?.stringValue != clientId {
            throw SignInRefusal(
                .wrongAudience,
                "the ID token was issued to another client (azp \"\((claims["azp"]?.stringValue ?? "").prefix(100))\"); check the client id setting"
            )
        }
        guard let expiry = claims["exp"]?.numberValue?.value, let issued = claims["iat"]?.numberValue?.value else {
            throw SignInRefusal(.malformedToken, "the ID token has no expiry (exp) or issue time (iat)")
        }
        guard now < expiry + leewaySeconds else {
            throw SignInRefusal(
                .expired,
                "the ID token expired \(Int(now - expiry)) seconds ago; sign in again (if it keeps happening, check this server's clock)"
            )
        }
        if issued > now + leewaySeconds || (claims["nbf"]?.numberValue?.value).map({ $0 > now + leewaySeconds }) == true
        {
            throw SignInRefusal(
                .expired,
                "the ID token is not valid yet (issued \(Int(issued - now)) seconds in the future); check the clocks of this server and the provider"
            )
        }
        guard let tokenNonce = claims["nonce"]?.stringValue, SessionToken.equal(tokenNonce, nonce) else {
            throw SignInRefusal(
                .nonceMismatch,
                "the ID token does not carry this sign-in's nonce: it was issued for another sign-in (a replayed token); start again from the sign-in page"
            )
        }
    }
}

/// What jwt-kit decodes while it checks the signature: nothing. The claims are read and checked
/// by ``IDTokenVerifier`` itself, against its own clock and with messages that say what failed.
struct SignatureOnly: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
