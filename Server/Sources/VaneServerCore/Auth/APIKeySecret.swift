import Crypto

/// API key secrets: how they are made, hashed and compared.
///
/// A key is `vane_<role>_` followed by 43 base64url characters (256 random bits). Only its
/// SHA-256 is stored; the secret is shown once, when it is created.
package enum APIKeySecret {
    package static func generate(role: KeyRole) -> String {
        "vane_\(role.rawValue)_" + Base64URL.encode(RandomBytes.make(32))
    }

    /// The stored form of a secret: lower-case hex SHA-256.
    package static func hash(_ secret: String) -> String {
        // Hashed in place: every request with a key comes here.
        var secret = secret
        return secret.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }.withUnsafeBytes {
            Hex.encode($0)
        }
    }

    /// A short public id for a key (`k_` + 12 hex characters).
    package static func newIdentifier() -> String {
        RandomBytes.identifier(prefix: "k_")
    }
}
