import Foundation
import Testing
import VaneCore

@testable import VaneOIDC
@testable import VaneServerCore

/// ID-token verification with keys the test makes: each check of OpenID Connect Core 3.1.3.7
/// refuses its own kind of bad token, and the provider's keys are fetched again for an unknown
/// key id, at most once a minute.
@Suite struct IDTokenVerifierTests {
    static let issuer = "https://id.example.com/realms/acme"
    static let client = "vane-console"
    static let nonce = "n-0S6_WzA2Mj"
    static let now = 1_800_000_000.0

    let key = TestSigningKey(kid: "key-1")

    func verifier(_ source: TestKeySource) -> IDTokenVerifier {
        IDTokenVerifier(issuer: Self.issuer, clientId: Self.client, keys: source.providerKeys())
    }

    func good() -> IDTokenFixture {
        .good(issuer: Self.issuer, client: Self.client, nonce: Self.nonce, now: Self.now)
    }

    /// The refusal's reason for a token, or nil when it verifies.
    func reason(_ token: String, source: TestKeySource? = nil) async -> SignInRefusal.Reason? {
        do {
            _ = try await verifier(source ?? TestKeySource([key])).verify(token, nonce: Self.nonce, now: Self.now)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func aGoodTokenVerifiesAndYieldsItsClaims() async throws {
        let claims = try await verifier(TestKeySource([key])).verify(
            try await key.sign(good()),
            nonce: Self.nonce,
            now: Self.now
        )
        #expect(claims["sub"] == .string("subject-ada"))
        #expect(claims["email"] == .string("ada@example.com"))
    }

    @Test func eachBadClaimHasItsOwnRefusal() async throws {
        var token = good()
        token.iss = "https://evil.example.com"
        #expect(await reason(try await key.sign(token)) == .wrongIssuer)

        token = good()
        token.aud = ["another-client"]
        #expect(await reason(try await key.sign(token)) == .wrongAudience)

        token = good()
        token.aud = [Self.client, "another-client"]
        token.azp = "another-client"
        #expect(await reason(try await key.sign(token)) == .wrongAudience)

        token = good()
        token.exp = Self.now - 61
        #expect(await reason(try await key.sign(token)) == .expired)

        token = good()
        token.iat = Self.now + 120
        #expect(await reason(try await key.sign(token)) == .expired)

        token = good()
        token.nonce = "a-nonce-from-another-sign-in"
        #expect(await reason(try await key.sign(token)) == .nonceMismatch)

        token = good()
        token.nonce = nil
        #expect(await reason(try await key.sign(token)) == .nonceMismatch)

        token = good()
        token.sub = nil
        #expect(await reason(try await key.sign(token)) == .malformedToken)
    }

    @Test func clocksMayDifferByTheLeewayOnly() async throws {
        var token = good()
        token.exp = Self.now - 30
        token.iat = Self.now + 30
        #expect(await reason(try await key.sign(token)) == nil)
        token.exp = Self.now - 60
        #expect(await reason(try await key.sign(token)) == .expired)
    }

    @Test func aSignatureByAnotherKeyUnderTheSameKeyIdIsRefused() async throws {
        let impostor = TestSigningKey(kid: key.kid)
        #expect(await reason(try await impostor.sign(good())) == .badSignature)
    }

    @Test func alteredClaimsBreakTheSignature() async throws {
        let token = try await key.sign(good())
        let parts = token.split(separator: ".").map(String.init)
        var claims = good()
        claims.sub = "subject-admin"
        let payload = Base64URL.encode(Array(try JSONEncoder().encode(claims)))
        #expect(await reason([parts[0], payload, parts[2]].joined(separator: ".")) == .badSignature)
    }

    @Test func unsignedAndSharedSecretTokensAreRefused() async throws {
        let payload = Base64URL.encode(Array(try JSONEncoder().encode(good())))
        for algorithm in ["none", "HS256"] {
            let header = Base64URL.encode(Array(#"{"alg":"\#(algorithm)","kid":"key-1"}"#.utf8))
            #expect(await reason(header + "." + payload + ".") == .badSignature)
        }
        #expect(await reason("not a token") == .malformedToken)
        #expect(await reason("a.b.c") == .malformedToken)
    }

    @Test func aTokenWithoutKeyIdUsesTheProvidersOnlyKey() async throws {
        let token = try await key.signWithoutKeyId(good())
        #expect(
            !String(decoding: Base64URL.decode(token.split(separator: ".")[0]) ?? [], as: UTF8.self).contains("kid")
        )
        #expect(await reason(token) == nil)
        #expect(await reason(try await TestSigningKey(kid: "other").signWithoutKeyId(good())) == .badSignature)
        // With two published keys, a token must say which.
        #expect(await reason(token, source: TestKeySource([key, TestSigningKey(kid: "key-2")])) == .malformedToken)
    }

    @Test func rotatedKeysAreFetchedWhenAnUnknownKeyIdArrives() async throws {
        let source = TestKeySource([key])
        let verifier = verifier(source)
        _ = try await verifier.verify(try await key.sign(good()), nonce: Self.nonce, now: Self.now)
        #expect(await verifier.keys.fetchCount == 1)

        // The provider rotates: tokens now come signed with a new key the JWKS also lists.
        let rotated = TestSigningKey(kid: "key-2")
        source.publish([key, rotated])
        source.advance(seconds: 61)
        _ = try await verifier.verify(try await rotated.sign(good()), nonce: Self.nonce, now: Self.now)
        #expect(await verifier.keys.fetchCount == 2)
        // Known keys need no fetch.
        _ = try await verifier.verify(try await key.sign(good()), nonce: Self.nonce, now: Self.now)
        #expect(await verifier.keys.fetchCount == 2)
    }

    @Test func unknownKeyIdsFetchTheKeysAtMostOnceAMinute() async throws {
        let source = TestKeySource([key])
        let verifier = verifier(source)
        _ = try await verifier.verify(try await key.sign(good()), nonce: Self.nonce, now: Self.now)
        source.advance(seconds: 61)
        for index in 0..<5 {
            let stranger = TestSigningKey(kid: "made-up-\(index)")
            await #expect(throws: SignInRefusal.self) {
                _ = try await verifier.verify(try await stranger.sign(good()), nonce: Self.nonce, now: Self.now)
            }
        }
        // One refetch for the first unknown key id; the other four found the keys too fresh.
        #expect(await verifier.keys.fetchCount == 2)
        // A minute later, a rotation is picked up again.
        let rotated = TestSigningKey(kid: "key-2")
        source.publish([rotated])
        source.advance(seconds: 60)
        _ = try await verifier.verify(try await rotated.sign(good()), nonce: Self.nonce, now: Self.now)
        #expect(await verifier.keys.fetchCount == 3)
    }
}
