import Crypto
import Foundation

/// The credential in an OFREP `eventStreams` URL.
///
/// OFREP providers connect to the advertised URL as given, and browsers' `EventSource` cannot
/// send headers, so the URL itself must authorize the stream. A long-lived API key must not go
/// into a URL (proxies log URLs), so the URL carries this instead: the key's id, the environment
/// and an expiry, signed with HMAC-SHA256 under the ``ServerSecret``, which is not in the
/// database (a reader of the database cannot mint tokens). Every node with the same secret can
/// check it; revoking the key revokes its tokens; the token opens only the environment's change
/// stream, which tells version numbers and nothing else.
///
/// Form: `base64url("keyId\nproject\nenvironment\nexpiry")` `.` `base64url(mac)`.
package enum StreamToken {
    /// How long a token opens streams: a day. Providers get a fresh URL with every bulk evaluation.
    package static let lifetimeSeconds: Int64 = 86_400

    /// A token for the key `keyId` to watch `environment` until `expiry` (Unix seconds).
    package static func make(
        keyId: String,
        environment: EnvironmentKey,
        expiry: Int64,
        secret: ServerSecret
    ) -> String {
        let payload = Array("\(keyId)\n\(environment.projectId)\n\(environment.environmentId)\n\(expiry)".utf8)
        return Base64URL.encode(payload) + "." + Base64URL.encode(mac(payload, secret: secret))
    }

    /// Why a token opens nothing.
    package enum Rejection: Error, Equatable {
        case malformed
        case unknownKey
        case badSignature
        case expired
    }

    /// The environment a token opens, checked against the live keys at `now` (Unix seconds).
    package static func verify(
        _ token: String,
        keys: KeyIndex,
        secret: ServerSecret,
        now: Int64
    ) throws(Rejection) -> EnvironmentKey {
        try open(token, keys: keys, secret: secret, now: now).environment
    }

    /// What a valid token opens: its environment, and the key and expiry that keep it open.
    package static func open(
        _ token: String,
        keys: KeyIndex,
        secret: ServerSecret,
        now: Int64
    ) throws(Rejection) -> (environment: EnvironmentKey, keyId: String, expiry: Int64) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1])
        else {
            throw .malformed
        }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard fields.count == 4, let expiry = Int64(fields[3]) else { throw .malformed }
        // HMAC's own comparison is constant-time.
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: secret.key) else {
            throw .badSignature
        }
        guard let (key, _) = keys.key(id: String(fields[0])), key.revokeTime == nil else { throw .unknownKey }
        guard now < expiry else { throw .expired }
        return (EnvironmentKey(projectId: String(fields[1]), environmentId: String(fields[2])), key.id, expiry)
    }

    private static func mac(_ payload: [UInt8], secret: ServerSecret) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: payload, using: secret.key))
    }
}
