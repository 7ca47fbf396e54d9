import Foundation

/// What a person may do in the console.
package enum UserRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Reads everything except secrets.
    case viewer
    /// Also changes flags, conditions and experiments in the environments granted to them.
    case editor
    /// Also manages projects, environments, API keys and people.
    case admin
}

/// Which environments an editor may change: `project/environment`, `project/*`, or `*` for all.
package struct EnvironmentGrant: Sendable, Hashable, CustomStringConvertible {
    /// The project, or nil for every project (`*`).
    package var projectId: String?
    /// The environment, or nil for every environment of the project.
    package var environmentId: String?

    /// Every environment of every project.
    package static let all = EnvironmentGrant(projectId: nil, environmentId: nil)

    /// Reads `*`, `project/*` or `project/environment`; nil for anything else.
    package init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "*" {
            self = .all
            return
        }
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[0].contains("*"), !parts[1].isEmpty else { return nil }
        projectId = String(parts[0])
        environmentId = parts[1] == "*" ? nil : String(parts[1])
        if environmentId?.contains("*") == true { return nil }
    }

    package init(projectId: String?, environmentId: String?) {
        self.projectId = projectId
        self.environmentId = environmentId
    }

    /// Whether the grant covers an environment.
    package func covers(_ environment: EnvironmentKey) -> Bool {
        guard let projectId else { return true }
        guard projectId == environment.projectId else { return false }
        return environmentId.map { $0 == environment.environmentId } ?? true
    }

    package var description: String {
        guard let projectId else { return "*" }
        return "\(projectId)/\(environmentId ?? "*")"
    }
}

/// A person who signs in to the console.
package struct UserAccount: Sendable, Hashable {
    /// The account's id (`u_` + 12 hex characters), shown in the audit log.
    package var id: String
    /// What they sign in with; stored lower-cased.
    package var email: String
    /// How the console greets them.
    package var name: String
    /// What they may do.
    package var role: UserRole
    /// For an editor, the environments they may change; ignored for viewers and admins.
    package var environments: [EnvironmentGrant]
    /// True until they choose their own password (a new account, a reset by an admin).
    package var mustChangePassword: Bool
    /// When the account was created.
    package var createTime: Int64
    /// When the password was last set.
    package var passwordTime: Int64
    /// When an admin disabled the account; a disabled account cannot sign in.
    package var disableTime: Int64?
    /// The identity provider's person this account is (single sign-on), once they signed in
    /// through it; nil for an account that has only ever used its password.
    package var identity: ExternalIdentity? = nil

    /// Who this is, for the audit log.
    package var actor: Actor { Actor(keyId: nil, userId: id, name: email) }
}

/// A person as an OpenID Connect provider names them: its issuer and their subject, together
/// unique and never reassigned (an email can change hands; a subject cannot).
package struct ExternalIdentity: Sendable, Hashable {
    package var issuer: String
    package var subject: String

    package init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }
}

/// A signed-in browser.
package struct UserSession: Sendable, Hashable {
    /// The SHA-256 (hex) of the cookie's token; the token itself is never stored.
    package var tokenHash: String
    /// Whose session it is.
    package var userId: String
    /// The token every form of this session carries (double submission against CSRF).
    package var csrfToken: String
    /// When the person signed in.
    package var createTime: Int64
    /// When the session was last used.
    package var lastSeenTime: Int64
    /// The client's address at sign-in.
    package var address: String
    /// The browser's User-Agent at sign-in, for "signed in on …" lists.
    package var userAgent: String
}
