import Foundation
import JWTKit
import Synchronization
import VaneCore

@testable import VaneOIDC
@testable import VaneServerCore

/// ID tokens the tests make: claims as a provider sends them (each may be left out).
struct IDTokenFixture: JWTPayload, Equatable {
    var iss: String?
    var sub: String?
    var aud: [String]?
    var azp: String?
    var exp: Double?
    var iat: Double?
    var nbf: Double?
    var nonce: String?
    var email: String?
    var emailVerified: Bool?
    var name: String?
    var groups: [String]?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nbf, nonce, email, name, groups
        case emailVerified = "email_verified"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// A token that passes every check for `issuer`, `client` and `nonce` at `now`.
    static func good(
        issuer: String,
        client: String,
        nonce: String,
        now: Double,
        email: String = "ada@example.com"
    )
        -> IDTokenFixture
    {
        IDTokenFixture(
            iss: issuer,
            sub: "subject-ada",
            aud: [client],
            exp: now + 300,
            iat: now - 5,
            nonce: nonce,
            email: email,
            emailVerified: true,
            name: "Ada Lovelace"
        )
    }
}

/// A signing key the test made, with its key id, and the JWKS entry that publishes it.
struct TestSigningKey: Sendable {
    let kid: String
    let key: ES256PrivateKey

    init(kid: String) {
        self.kid = kid
        self.key = ES256PrivateKey()
    }

    /// The public half as a JWKS key object.
    var jwk: JSONValue {
        let parameters = key.publicKey.parameters
        return [
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": .string(kid),
            "x": .string(parameters?.x ?? ""), "y": .string(parameters?.y ?? ""),
        ]
    }

    /// The claims signed with this key (header `kid` = ``kid``).
    func sign(_ claims: IDTokenFixture) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// The claims signed with this key, with no `kid` in the header.
    func signWithoutKeyId(_ claims: IDTokenFixture) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key)
        return try await keys.sign(claims)
    }

    /// A JWKS document of `keys`.
    static func jwks(_ keys: [TestSigningKey]) -> [UInt8] {
        Array(JSONValue.object(["keys": .array(keys.map(\.jwk))]).serialized(.compact).utf8)
    }
}

/// A provider's JWKS the test changes (key rotation), counting how often it is fetched, on a
/// clock the test moves.
final class TestKeySource: Sendable {
    private let state: Mutex<(keys: [TestSigningKey], time: Double)>

    init(_ keys: [TestSigningKey]) {
        state = Mutex((keys, 1000))
    }

    func publish(_ keys: [TestSigningKey]) { state.withLock { $0.keys = keys } }
    func advance(seconds: Double) { state.withLock { $0.time += seconds } }
    var time: Double { state.withLock { $0.time } }

    func providerKeys(minimumRefreshSeconds: Double = 60) -> ProviderKeys {
        ProviderKeys(
            minimumRefreshSeconds: minimumRefreshSeconds,
            now: { self.time },
            fetch: { () async throws(SignInRefusal) -> [UInt8] in TestSigningKey.jwks(self.state.withLock { $0.keys }) }
        )
    }
}
