import Crypto
import VaneServerCore

/// Proof Key for Code Exchange (RFC 7636) with S256: the verifier stays on the server, the
/// provider sees only its SHA-256, so a stolen authorization code is useless without it.
enum PKCE {
    /// 256 random bits, base64url: 43 characters, within RFC 7636's 43 to 128.
    static func verifier() -> String {
        Base64URL.encode(RandomBytes.make(32))
    }

    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    static func challenge(for verifier: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8))))
    }
}
