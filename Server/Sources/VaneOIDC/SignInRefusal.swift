/// Why a single sign-on ended without a session: what went wrong and what to do, for the page
/// the browser lands on. No refusal ever starts a session.
package struct SignInRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was refused, for tests and logs.
    package enum Reason: String, Sendable, Equatable {
        /// Discovery, the keys or the token endpoint could not be reached or answered nonsense.
        case providerUnreachable
        /// The provider said no: an error on the way back, or a refused code exchange.
        case providerRefused
        /// The way back names no sign-in this browser started, or one already finished.
        case unknownState
        /// The ID token is not a well-formed signed JWT with the claims OpenID Connect requires.
        case malformedToken
        /// The token's signature does not verify against the provider's keys.
        case badSignature
        /// The token is from another issuer than the configured one.
        case wrongIssuer
        /// The token is for another client.
        case wrongAudience
        /// The token's time is over (or not yet begun).
        case expired
        /// The token does not carry the nonce of this sign-in (a replayed token).
        case nonceMismatch
        /// No usable email, or one whose domain is not allowed.
        case emailNotAllowed
        /// The person's groups grant no role here.
        case noRole
        /// The account exists but cannot be used (disabled, tied to another person).
        case accountUnusable
    }

    package var reason: Reason
    /// What went wrong and what to do, one or two sentences.
    package var message: String

    package init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { "\(reason.rawValue): \(message)" }
}
