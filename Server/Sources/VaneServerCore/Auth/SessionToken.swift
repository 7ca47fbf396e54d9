/// Session cookies and CSRF tokens: 256 random bits each, base64url. Only the SHA-256 of a
/// session token is stored, like API keys.
package enum SessionToken {
    /// The name of the console's session cookie. The API does not read it (it takes API keys),
    /// but names the console to a request that carries it.
    package static let cookieName = "vane_session"

    /// A new random token.
    package static func generate() -> String {
        Base64URL.encode(RandomBytes.make(32))
    }

    /// The stored form of a token: lower-case hex SHA-256.
    package static func hash(_ token: String) -> String {
        APIKeySecret.hash(token)
    }

    /// Compares two tokens in time that depends only on their lengths.
    package static func equal(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
