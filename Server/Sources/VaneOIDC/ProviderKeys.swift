import Foundation
package import JWTKit

/// The provider's signing keys (its JWKS), kept between sign-ins. A token signed with a key not
/// seen yet makes it fetch the JWKS again — the provider has rotated its keys — but at most once
/// per ``minimumRefreshSeconds``, so tokens with made-up key ids cannot make Vane hammer the
/// provider.
package actor ProviderKeys {
    /// Fetches the JWKS document.
    private let fetch: @Sendable () async throws(SignInRefusal) -> [UInt8]
    /// The least time between two fetches.
    package let minimumRefreshSeconds: Double
    /// Seconds on a monotonic clock.
    private let now: @Sendable () -> Double

    private var collection = JWTKeyCollection()
    private var keyIds: Set<String> = []
    private var lastFetch: Double?
    /// How many times the JWKS was fetched (tests check the rate limit with it).
    package private(set) var fetchCount = 0

    package init(
        minimumRefreshSeconds: Double = 60,
        now: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 },
        fetch: @escaping @Sendable () async throws(SignInRefusal) -> [UInt8]
    ) {
        self.minimumRefreshSeconds = minimumRefreshSeconds
        self.now = now
        self.fetch = fetch
    }

    /// The keys, holding the key `keyId` names: fetched anew when it is not among them and the
    /// last fetch is old enough. A token without a key id may use the provider's only key
    /// (OpenID Connect Core 10.1: `kid` is required only while there are several).
    /// - Throws: ``SignInRefusal`` (provider unreachable, or no such key).
    package func keys(for keyId: String?) async throws(SignInRefusal) -> JWTKeyCollection {
        if let keyId, keyIds.contains(keyId) { return collection }
        if keyId == nil, lastFetch != nil { return try onlyKey() }
        let time = now()
        if let lastFetch, time - lastFetch < minimumRefreshSeconds { throw Self.unpublished(keyId) }
        lastFetch = time
        fetchCount += 1
        let document = try await fetch()
        try await install(document)
        guard let keyId else { return try onlyKey() }
        guard keyIds.contains(keyId) else { throw Self.unpublished(keyId) }
        return collection
    }

    /// The keys, for a token without a key id: only while the provider publishes one key, which
    /// is then the collection's default.
    private func onlyKey() throws(SignInRefusal) -> JWTKeyCollection {
        guard keyIds.count == 1 else {
            throw SignInRefusal(
                .malformedToken,
                "the ID token names no signing key (kid) while the identity provider publishes \(keyIds.count); check the provider's signing settings"
            )
        }
        return collection
    }

    private static func unpublished(_ keyId: String?) -> SignInRefusal {
        SignInRefusal(
            .badSignature,
            "the ID token is signed with a key (kid \"\((keyId ?? "").prefix(80))\") the identity provider does not publish; sign in again, and if it keeps happening, check the issuer setting"
        )
    }

    /// Replaces the keys with a JWKS document's signing keys (each with a `kid`; keys jwt-kit
    /// cannot use, such as encryption keys, are left out).
    private func install(_ document: [UInt8]) async throws(SignInRefusal) {
        let jwks: JWKS
        do {
            jwks = try JSONDecoder().decode(JWKS.self, from: Data(document))
        } catch {
            throw SignInRefusal(
                .providerUnreachable,
                "the identity provider's keys (jwks_uri) are not a JWKS document; check the issuer setting"
            )
        }
        let fresh = JWTKeyCollection()
        var ids: Set<String> = []
        for key in jwks.keys {
            guard let id = key.keyIdentifier?.string else { continue }
            do {
                _ = try await fresh.add(jwk: key)
                ids.insert(id)
            } catch {
                continue
            }
        }
        collection = fresh
        keyIds = ids
    }
}
