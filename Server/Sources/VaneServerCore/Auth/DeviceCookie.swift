import Crypto

/// The console's device cookie (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"):
/// a browser that signed in to an account gets one, and its later sign-ins to that account are
/// throttled by the cookie's own failures rather than the account's, so strangers guessing at a
/// known name (`admin`) cannot lock its owner out (``SignInThrottle``).
///
/// Form: `base64url("email\nnonce")` `.` `base64url(HMAC-SHA256)` under the ``ServerSecret``, the
/// MAC taken over the payload behind a purpose line, so no other token the secret signs can pass
/// for a device cookie. Nothing is stored: every node with the same secret can check it.
package enum DeviceCookie {
    /// The cookie's name.
    package static let name = "vane_device"
    /// How long a browser keeps it: 400 days, the most browsers allow.
    package static let maximumAgeSeconds = 400 * 86_400
    /// Only sign-ins need it: browsers send it nowhere else.
    package static let path = "/sign-in"

    /// A new device cookie for the account with this email.
    package static func make(email: String, secret: ServerSecret) -> String {
        let payload = Array("\(email.lowercased())\n\(Base64URL.encode(RandomBytes.make(16)))".utf8)
        return Base64URL.encode(payload) + "." + Base64URL.encode(mac(payload, secret: secret))
    }

    /// The device a cookie names (its nonce) when it is genuine and was made for `email`;
    /// nil for anything else, which then counts as a stranger's attempt.
    package static func device(in cookie: String, email: String, secret: ServerSecret) -> String? {
        guard cookie.utf8.count <= 1024 else { return nil }
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), let signature = Base64URL.decode(parts[1])
        else { return nil }
        // HMAC's own comparison is constant-time.
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                signature,
                authenticating: purpose + payload,
                using: secret.key
            )
        else { return nil }
        let fields = String(decoding: payload, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard fields.count == 2, !fields[1].isEmpty, fields[0] == email.lowercased()[...] else { return nil }
        return String(fields[1])
    }

    private static let purpose = Array("vane device cookie\n".utf8)

    private static func mac(_ payload: [UInt8], secret: ServerSecret) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: purpose + payload, using: secret.key))
    }
}
