import Foundation
package import VaneServerCore

/// The console's single sign-on through an OpenID Connect provider, as `vane serve` is told it.
/// Off until ``issuer`` is set; ``problems()`` checks a merged configuration once.
public struct SingleSignOnSettings: Sendable, Hashable {
    /// The provider's issuer URL (`https://login.example.com/realms/acme`): its discovery
    /// document is at `<issuer>/.well-known/openid-configuration`, and its ID tokens' `iss` must
    /// be the issuer that document names.
    public var issuer: String?
    /// The client id Vane is registered with at the provider; ID tokens' `aud` must hold it.
    public var clientId: String?
    /// The client secret, if the provider gave one (a confidential client). Nil: a public
    /// client, which PKCE alone protects.
    public var clientSecret: String?
    /// Where the provider sends the browser back: `https://<this server>/sign-in/oidc/callback`,
    /// registered at the provider exactly so.
    public var redirectURL: String?
    /// The name on the sign-in page's button ("Sign in with Okta"); nil: the issuer's host.
    public var providerName: String?
    /// The scopes asked for, space-separated; `openid` is required.
    public var scopes = "openid email profile"
    /// Email domains whose people get an account at their first sign-in (`example.com`). Empty:
    /// only people an admin created an account for (by email) can sign in.
    public var allowedDomains: [String] = []
    /// The ID-token claim that lists a person's groups (`groups`, `roles`); nil: roles are
    /// assigned by admins, and new accounts are viewers.
    public var groupsClaim: String?
    /// `GROUP=ROLE` or `GROUP=editor:project/environment` (repeat for several grants): with
    /// ``groupsClaim``, each sign-in sets the account's role and environments from its groups.
    public var groupRoles: [String] = []

    /// Single sign-on off: no issuer.
    public init() {}

    /// Whether any single sign-on setting is given (then the required ones must all be).
    public var isConfigured: Bool {
        issuer != nil || clientId != nil || redirectURL != nil || clientSecret != nil || groupsClaim != nil
            || !allowedDomains.isEmpty || !groupRoles.isEmpty || providerName != nil
    }

    /// The path the provider sends the browser back to.
    public static let callbackPath = "/sign-in/oidc/callback"

    /// A setting ``problems()`` can refuse.
    public enum Field: String, Sendable, Hashable, CaseIterable {
        case issuer, clientId, clientSecret, redirectURL, scopes, allowedDomains, groupsClaim, groupRoles
    }

    /// Every setting that is missing or malformed, with what it must be.
    public func problems() -> [(field: Field, message: String)] {
        guard isConfigured else { return [] }
        var problems: [(Field, String)] = []
        if let issuer {
            if let problem = ProviderURL.problem(issuer) { problems.append((.issuer, problem)) }
        } else {
            problems.append(
                (.issuer, "must be given with the other single sign-on settings (the provider's issuer URL)")
            )
        }
        if clientId?.isEmpty ?? true {
            problems.append(
                (.clientId, "must be given with the other single sign-on settings (the client id at the provider)")
            )
        }
        if let clientSecret, clientSecret.isEmpty {
            problems.append((.clientSecret, "must not be empty; leave it out for a public client"))
        }
        if let redirectURL {
            if let problem = ProviderURL.problem(redirectURL) {
                problems.append((.redirectURL, problem))
            } else if URLComponents(string: redirectURL)?.path != Self.callbackPath {
                problems.append(
                    (.redirectURL, "must end in \(Self.callbackPath), found \"\(redirectURL.prefix(200))\"")
                )
            }
        } else {
            problems.append(
                (
                    .redirectURL,
                    "must be given with the other single sign-on settings (https://<this server>\(Self.callbackPath))"
                )
            )
        }
        if !scopes.split(separator: " ").contains("openid") {
            problems.append((.scopes, "must include openid, found \"\(scopes.prefix(200))\""))
        }
        for domain in allowedDomains where Self.normalizedDomain(domain) == nil {
            problems.append(
                (.allowedDomains, "must list email domains such as example.com, found \"\(domain.prefix(100))\"")
            )
        }
        if let groupsClaim, groupsClaim.isEmpty { problems.append((.groupsClaim, "must not be empty")) }
        for text in groupRoles {
            if case .failure(let problem) = GroupRoleMapping.parse(text) {
                problems.append((.groupRoles, problem.message))
            }
        }
        if !groupRoles.isEmpty, groupsClaim == nil {
            problems.append((.groupRoles, "needs the groups claim that lists a person's groups (e.g. groups)"))
        }
        return problems
    }

    /// `example.com` lower-cased, without a leading `@`; nil when it is no domain.
    static func normalizedDomain(_ text: String) -> String? {
        var domain = text.trimmingCharacters(in: .whitespaces).lowercased()
        if domain.hasPrefix("@") { domain.removeFirst() }
        guard !domain.isEmpty, domain.count <= 253, !domain.hasPrefix("."), !domain.hasSuffix("."),
            domain.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." })
        else { return nil }
        return domain
    }

    /// The mappings of ``groupRoles``; those that do not parse are left out (``problems()``
    /// refuses them first).
    package var mappings: [GroupRoleMapping] {
        groupRoles.compactMap { try? GroupRoleMapping.parse($0).get() }
    }
}

/// What a provider URL must be: absolute `https`, or `http` to this machine only (a test
/// provider on loopback), without a fragment.
enum ProviderURL {
    static func problem(_ text: String) -> String? {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), let host = url.host,
            !host.isEmpty, url.fragment == nil
        else { return "must be an absolute https URL, found \"\(text.prefix(200))\"" }
        if scheme == "https" { return nil }
        if scheme == "http", isLoopback(host) { return nil }
        return "must use https (http only to 127.0.0.1, ::1 or localhost), found \"\(text.prefix(200))\""
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}

/// One `GROUP=ROLE[:grant]` setting: members of the group get at least the role (and, for an
/// editor, the environment).
package struct GroupRoleMapping: Sendable, Hashable {
    package var group: String
    package var role: UserRole
    package var grant: EnvironmentGrant?

    package struct Problem: Error, Sendable { package var message: String }

    package static func parse(_ text: String) -> Result<GroupRoleMapping, Problem> {
        let expected = "write GROUP=viewer, GROUP=admin or GROUP=editor:project/environment (project/* or *)"
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].trimmingCharacters(in: .whitespaces).isEmpty else {
            return .failure(Problem(message: "\"\(text.prefix(100))\" is not a group mapping: \(expected)"))
        }
        let group = parts[0].trimmingCharacters(in: .whitespaces)
        let target = parts[1].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let role = UserRole(rawValue: target[0].trimmingCharacters(in: .whitespaces)) else {
            return .failure(Problem(message: "\"\(text.prefix(100))\" names no role: \(expected)"))
        }
        guard target.count == 2 else { return .success(GroupRoleMapping(group: group, role: role, grant: nil)) }
        guard role == .editor, let grant = EnvironmentGrant(String(target[1])) else {
            return .failure(
                Problem(message: "\"\(text.prefix(100))\": only an editor takes an environment; \(expected)")
            )
        }
        return .success(GroupRoleMapping(group: group, role: role, grant: grant))
    }

    /// The role and environments a person with `groups` gets: the highest role any of their
    /// groups maps to, and every environment their editor groups grant; nil when none maps.
    package static func resolve(
        _ mappings: [GroupRoleMapping],
        groups: [String]
    ) -> (role: UserRole, environments: [EnvironmentGrant])? {
        let matching = mappings.filter { groups.contains($0.group) }
        let order: [UserRole] = [.viewer, .editor, .admin]
        guard let role = matching.map(\.role).max(by: { order.firstIndex(of: $0) ?? 0 < order.firstIndex(of: $1) ?? 0 })
        else { return nil }
        var environments: [EnvironmentGrant] = []
        for grant in matching.compactMap(\.grant) where role == .editor && !environments.contains(grant) {
            environments.append(grant)
        }
        return (role, environments)
    }
}
