import Crypto
import Foundation

/// Standard Webhooks' signing: secrets `whsec_<base64>`, and the `webhook-signature` header
/// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the base64-decoded secret, one
/// signature per secret, separated by spaces.
package enum WebhookSignature {
    /// The prefix of every secret.
    package static let secretPrefix = "whsec_"

    /// A new secret: 32 random bytes.
    package static func generateSecret() -> String {
        secretPrefix + Data(RandomBytes.make(32)).base64EncodedString()
    }

    /// The key bytes of a secret; nil for text that is not `whsec_` and base64.
    package static func key(of secret: String) -> [UInt8]? {
        guard secret.hasPrefix(secretPrefix) else { return nil }
        return Data(base64Encoded: String(secret.dropFirst(secretPrefix.count))).map(Array.init)
    }

    /// The `webhook-signature` header value: one `v1,` signature per secret, in order.
    package static func header(messageId: String, timestamp: Int64, body: String, secrets: [String]) -> String {
        let signed = Array("\(messageId).\(timestamp).".utf8) + Array(body.utf8)
        return secrets.compactMap { secret in
            guard let key = key(of: secret) else { return nil }
            let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key))
            return "v1," + Data(code).base64EncodedString()
        }.joined(separator: " ")
    }
}
