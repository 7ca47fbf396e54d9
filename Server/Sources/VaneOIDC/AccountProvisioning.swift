import Foundation
import Logging
import VaneCore
import VaneServerCore

/// The account a verified ID token signs in to. In order: the account tied to the token's
/// issuer and subject; else the account an admin created for the token's email, tied to it now;
/// else a new account, only for an email in an allowed domain. With a groups claim and
/// mappings, every sign-in sets the account's role and environments from the person's groups;
/// without, admins assign them as for any account and new accounts are viewers.
struct AccountProvisioning: Sendable {
    let settings: SingleSignOnSettings
    let accounts: Accounts
    let mappings: [GroupRoleMapping]
    let allowedDomains: Set<String>

    init(settings: SingleSignOnSettings, accounts: Accounts) {
        self.settings = settings
        self.accounts = accounts
        self.mappings = settings.mappings
        self.allowedDomains = Set(settings.allowedDomains.compactMap(SingleSignOnSettings.normalizedDomain))
    }

    func account(for claims: JSONObject, issuer: String, logger: Logger) async throws -> UserAccount {
        let identity = ExternalIdentity(issuer: issuer, subject: claims["sub"]?.stringValue ?? "")
        let email = claims["email"]?.stringValue?.trimmingCharacters(in: .whitespaces).lowercased()
        // An email the provider marks unverified is never used to find or create an account.
        let unverified = claims["email_verified"] == .bool(false) || claims["email_verified"] == .string("false")
        let access = try grantedAccess(claims)
        let store = accounts.store

        if let user = try await store.user(identity: identity) {
            return try await update(try usable(user), access: access)
        }
        guard let email, Accounts.problem(withEmail: email) == nil, email.contains("@") else {
            throw SignInRefusal(
                .emailNotAllowed,
                "the identity provider sent no email address for you; ask its admin to release the email claim (scope email) to Vane"
            )
        }
        guard !unverified else {
            throw SignInRefusal(
                .emailNotAllowed,
                "the identity provider says your email \(email) is not verified; verify it there and sign in again"
            )
        }
        if let (existing, _) = try await store.user(email: email) {
            if case .breakGlassOnly(let breakGlass) = accounts.passwordSignIn, breakGlass == email {
                throw SignInRefusal(
                    .accountUnusable,
                    "\(email) is the break-glass account, which signs in with its password only"
                )
            }
            guard existing.identity == nil else {
                throw SignInRefusal(
                    .accountUnusable,
                    "the Vane account \(email) belongs to another person at the identity provider; ask an admin to sort out the two accounts"
                )
            }
            let linked = try await store.link(userId: try usable(existing).id, to: identity)
            logger.info("single sign-on tied an account", metadata: ["user": "\(linked.id)"])
            return try await update(linked, access: access)
        }
        let domain = String(email.split(separator: "@").last ?? "")
        guard allowedDomains.contains(domain) else {
            let allowed =
                allowedDomains.isEmpty
                ? "no domain gets accounts automatically on this server"
                : "accounts are created only for emails at \(allowedDomains.sorted().joined(separator: ", "))"
            throw SignInRefusal(
                .emailNotAllowed,
                "Vane has no account for \(email), and \(allowed); ask an admin to create an account for this email"
            )
        }
        let name = (claims["name"]?.stringValue?.trimmingCharacters(in: .whitespaces)).flatMap { $0.isEmpty ? nil : $0 }
        let role = access?.role ?? .viewer
        // Nobody knows this password: the account signs in through the provider (an admin's
        // reset can still give it one where password sign-in is on).
        let created = try await store.createUser(
            email: email,
            name: String((name ?? email).prefix(200)),
            role: role,
            environments: role == .editor ? access?.environments ?? [] : [],
            passwordHash: try await accounts.hasher.hash(Accounts.oneTimePassword() + Accounts.oneTimePassword()),
            mustChangePassword: false,
            identity: identity,
            actor: nil
        )
        logger.info("single sign-on created an account", metadata: ["user": "\(created.id)"])
        return created
    }

    /// The role and environments the person's groups grant, when mappings are configured; nil
    /// when admins assign them.
    func grantedAccess(
        _ claims: JSONObject
    ) throws(SignInRefusal) -> (role: UserRole, environments: [EnvironmentGrant])? {
        guard let claim = settings.groupsClaim, !mappings.isEmpty else { return nil }
        let groups: [String]
        switch claims[claim] {
        case .array(let items)?: groups = items.compactMap(\.stringValue)
        case .string(let group)?: groups = [group]
        default: groups = []
        }
        guard let access = GroupRoleMapping.resolve(mappings, groups: groups) else {
            let mapped = Set(mappings.map(\.group)).sorted().joined(separator: ", ")
            let yours = groups.isEmpty ? "no groups" : "the groups \(groups.prefix(20).joined(separator: ", "))"
            throw SignInRefusal(
                .noRole,
                "the identity provider lists \(yours) for you in its \(claim) claim, and none of them has a role in Vane; ask an admin to add you to one of: \(mapped)"
            )
        }
        return access
    }

    private func usable(_ user: UserAccount) throws(SignInRefusal) -> UserAccount {
        guard user.disableTime == nil else {
            throw SignInRefusal(
                .accountUnusable,
                "your Vane account (\(user.email)) is disabled; ask an admin to enable it"
            )
        }
        return user
    }

    /// Sets the role and environments from the groups, when they differ (audited as the
    /// person's own sign-in).
    private func update(
        _ user: UserAccount,
        access: (role: UserRole, environments: [EnvironmentGrant])?
    ) async throws -> UserAccount {
        guard let access else { return user }
        let environments = access.role == .editor ? access.environments : []
        guard user.role != access.role || user.environments != environments else { return user }
        return try await accounts.store.updateUser(
            id: user.id,
            role: access.role,
            environments: environments,
            actor: user.actor
        )
    }
}
