import Foundation

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

        init(_ kind: String, _ pattern: String) {
            self.kind = kind
            self.regex = SendableRegex.compile(pattern) ?? nil
        }
    }

    static let patterns: [Pattern] = [
        Pattern("a private key (PEM)", "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"),
        Pattern("an AWS access key id", "\\b(AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\\b"),
        Pattern("a GitHub token", "\\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        Pattern("a Slack token", "\\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        Pattern("a Stripe secret key", "\\b[sr]k_live_[A-Za-z0-9]{16,}"),
        Pattern("a Google API key", "\\bAIza[0-9A-Za-z_\\-]{35}"),
        Pattern("an OpenAI-style secret key", "\\bsk-(proj-)?[A-Za-z0-9_\\-]{32,}"),
        Pattern("a JSON Web Token", "\\beyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za-z0-9_\\-]{8,}"),
        Pattern("a password in a URL", "\\b[A-Za-z][A-Za-z0-9+.\\-]*://[^/\\s:@]+:[^/\\s@]+@"),
        Pattern(
            "a password or secret field",
            "(?i)[\"']?(password|passwd|client_secret|secret_key|api_secret|private_key|access_token)[\"']?\\s*[:=]\\s*[\"']?[^\\s\"',}]{8,}"
        ),
    ]

    /// The kind of credential the text looks like it contains ("a GitHub token"), or nil.
    public static func credentialKind(in text: String) -> String? {
        // Short values cannot hold any of these shapes; skip the regex work for them.
        guard text.utf8.count >= 16 else { return nil }
        return patterns.first { $0.regex?.matches(text) == true }?.kind
    }
}
