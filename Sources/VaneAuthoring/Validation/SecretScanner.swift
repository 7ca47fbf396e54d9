import Foundation
import VaneCore

/// Finds values that look like credentials.
///
/// Every client can read every remote config value it receives (and with Firebase, the whole
/// template), so a key, token or password put there is published. The scanner looks for the
/// shapes of common credentials; it names what it found, never the secret itself.
public enum SecretScanner {
    /// A kind of credential and the pattern that finds it.
    struct Pattern: Sendable {
        let kind: String
        let regex: SendableRegex?
        /// Text every match contains (one of them), ASCII; lowercase when `ignoringCase`. The
        /// regular expression runs only on values that contain one: a template has thousands of
        /// values, and a byte search costs far less than ten regular expressions.
        let anchors: [[UInt8]]
        let ignoringCase: Bool

        init(_ kind: String, _ pattern: String, anchors: [String], ignoringCase: Bool = false) {
            self.kind = kind
            self.regex = SendableRegex.compile(pattern) ?? nil
            self.anchors = anchors.map { Array($0.utf8) }
            self.ignoringCase = ignoringCase
        }

        /// Whether `bytes` (lowercased ASCII in `lowered`) may hold a match.
        func mayMatch(_ bytes: [UInt8], lowered: [UInt8]) -> Bool {
            let text = ignoringCase ? lowered : bytes
            return anchors.contains { text.firstRange(of: $0) != nil }
        }
    }

    static let patterns: [Pattern] = [
        Pattern(
            "a private key (PEM)",
            "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----",
            anchors: ["PRIVATE KEY-----"]
        ),
        Pattern(
            "an AWS access key id",
            "\\b(AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\\b",
            anchors: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"]
        ),
        Pattern(
            "a GitHub token",
            "\\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
            anchors: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]
        ),
        Pattern("a Slack token", "\\bxox[abposr]-[A-Za-z0-9-]{10,}", anchors: ["xox"]),
        Pattern("a Stripe secret key", "\\b[sr]k_live_[A-Za-z0-9]{16,}", anchors: ["k_live_"]),
        Pattern("a Google API key", "\\bAIza[0-9A-Za-z_\\-]{35}", anchors: ["AIza"]),
        Pattern("an OpenAI-style secret key", "\\bsk-(proj-)?[A-Za-z0-9_\\-]{32,}", anchors: ["sk-"]),
        Pattern(
            "a JSON Web Token",
            "\\beyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za-z0-9_\\-]{8,}",
            anchors: ["eyJ"]
        ),
        Pattern(
            "a password in a URL",
            "\\b[A-Za-z][A-Za-z0-9+.\\-]*://[^/\\s:@]+:[^/\\s@]+@",
            anchors: ["://"]
        ),
        Pattern(
            "a password or secret field",
            "(?i)[\"']?(password|passwd|client_secret|secret_key|api_secret|private_key|access_token)[\"']?\\s*[:=]\\s*[\"']?[^\\s\"',}]{8,}",
            anchors: [
                "password", "passwd", "client_secret", "secret_key", "api_secret", "private_key", "access_token",
            ],
            ignoringCase: true
        ),
    ]

    /// The kind of credential the text looks like it contains ("a GitHub token"), or nil.
    public static func credentialKind(in text: String) -> String? {
        // Short values cannot hold any of these shapes; skip the regex work for them.
        guard text.utf8.count >= 16 else { return nil }
        let bytes = Array(text.utf8)
        // Only ASCII letters fold: the anchors are ASCII.
        let lowered = bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
        return patterns.first { $0.mayMatch(bytes, lowered: lowered) && $0.regex?.matches(text) == true }?.kind
    }
}
