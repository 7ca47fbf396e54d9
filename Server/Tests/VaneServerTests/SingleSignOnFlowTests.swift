import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing
import VaneCore

@testable import VaneOIDC
@testable import VaneServerCore

/// The whole single sign-on against a provider on loopback (discovery, keys and a token
/// endpoint that checks PKCE, served by Hummingbird), on both engines: accounts created, tied
/// and given roles from groups, and every refusal without an account or a second use.
@Suite(.timeLimit(.minutes(5))) struct SingleSignOnFlowTests {
    static let client = "vane-console"
    static let secret = "client-secret-for-tests"

    /// A provider the test scripts: each code it hands out carries the PKCE challenge of the
    /// sign-in it was issued for and the claims its ID token will have.
    final class FakeProvider: Sendable {
        let key = TestSigningKey(kid: "provider-key")
        let codes = Mutex<[String: (challenge: String, claims: IDTokenFixture)]>([:])
        let basicAuthorization = Mutex<String?>(nil)

        func router(issuer: @escaping @Sendable () -> String) -> Router<BasicRequestContext> {
            let router = Router()
            router.get(".well-known/openid-configuration") { _, _ -> Response in
                let base = issuer()
                let document: JSONValue = [
                    "issuer": .string(base), "authorization_endpoint": .string(base + "/authorize"),
                    "token_endpoint": .string(base + "/token"), "jwks_uri": .string(base + "/jwks"),
                    "code_challenge_methods_supported": ["S256"],
                ]
                return Self.json(document.serialized(.compact))
            }
            router.get("jwks") { _, _ -> Response in
                Self.json(String(decoding: TestSigningKey.jwks([self.key]), as: UTF8.self))
            }
            router.post("token") { request, _ -> Response in
                self.basicAuthorization.withLock { $0 = request.headers[.authorization] }
                let body = try await request.body.collect(upTo: 65_536)
                let fields = Self.form(String(buffer: body))
                guard let code = fields["code"], let issued = self.codes.withLock({ $0.removeValue(forKey: code) })
                else { return Self.json(#"{"error":"invalid_grant"}"#, status: .badRequest) }
                let verifier = fields["code_verifier"] ?? ""
                let challenge = Base64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8))))
                guard challenge == issued.challenge else {
                    return Self.json(
                        #"{"error":"invalid_grant","error_description":"the PKCE verifier is missing or does not match"}"#,
                        status: .badRequest
                    )
                }
                let token = try await self.key.sign(issued.claims)
                return Self.json(#"{"access_token":"a","token_type":"Bearer","id_token":"\#(token)"}"#)
            }
            return router
        }

        /// What the provider does when the person signs in: a code for the sign-in whose
        /// authorization URL is given, for these claims (their nonce taken from the URL unless set).
        func authorize(_ url: String, claims: (String) -> IDTokenFixture) -> (code: String, state: String) {
            let query = Self.form(String(url.split(separator: "?", maxSplits: 1).last ?? ""))
            let code = SessionToken.generate()
            codes.withLock { $0[code] = (query["code_challenge"] ?? "", claims(query["nonce"] ?? "")) }
            return (code, query["state"] ?? "")
        }

        static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
            Response(
                status: status,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: text))
            )
        }

        static func form(_ text: String) -> [String: String] {
            var fields: [String: String] = [:]
            for pair in text.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
                }
                fields[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            return fields
        }
    }

    /// A server's single sign-on against a fake provider on a free loopback port.
    static func withProvider(
        _ database: TestDatabase,
        passwordSignIn: PasswordSignIn = .everyone,
        configure: (inout SingleSignOnSettings) -> Void = { _ in },
        _ body: @Sendable (SingleSignOn, FakeProvider, Accounts, ConfigStore) async throws -> Void
    ) async throws {
        let provider = FakeProvider()
        let issuer = Mutex("")
        let application = Application(
            router: provider.router(issuer: { issuer.withLock { $0 } }),
            configuration: .init(address: .hostname("127.0.0.1", port: 0))
        )
        var settings = SingleSignOnSettings()
        settings.clientId = client
        settings.clientSecret = secret
        settings.redirectURL = "http://127.0.0.1:8080/sign-in/oidc/callback"
        settings.allowedDomains = ["example.com"]
        configure(&settings)
        let configured = settings
        try await application.test(.live) { client in
            let base = "http://127.0.0.1:\(client.port ?? 0)"
            issuer.withLock { $0 = base }
            var settings = configured
            settings.issuer = base
            #expect(settings.problems().isEmpty)
            try await ConfigStoreTests.withStore(database) { store, _ in
                let accounts = Accounts(
                    store: AccountStore(engine: store.engine),
                    hasher: PasswordHasher(cost: 4),
                    secret: ServerSecret(APIKeySecret.generate(role: .admin)),
                    idleTimeoutMinutes: 60,
                    lifetimeHours: 24,
                    passwordSignIn: passwordSignIn
                )
                try await body(SingleSignOn(settings: settings, accounts: accounts), provider, accounts, store)
            }
        }
    }

    static let logger = Logger(label: "sso-test")

    /// Starts a sign-in and has the provider answer with `claims`; returns the way back.
    static func signIn(
        _ sso: SingleSignOn,
        _ provider: FakeProvider,
        claims: @escaping (_ issuer: String, _ nonce: String) -> IDTokenFixture
    ) async throws -> SingleSignOn.Callback {
        let start = try await sso.start(next: "/projects")
        #expect(start.authorizationURL.contains("code_challenge_method=S256"))
        let (code, state) = provider.authorize(start.authorizationURL) { claims(sso.issuer, $0) }
        #expect(state == start.state)
        return SingleSignOn.Callback(state: state, code: code, error: nil, errorDescription: nil, browserState: state)
    }

    static func claims(
        _ issuer: String,
        _ nonce: String,
        email: String = "ada@example.com",
        groups: [String]? = nil
    )
        -> IDTokenFixture
    {
        var claims = IDTokenFixture.good(
            issuer: issuer,
            client: client,
            nonce: nonce,
            now: Date().timeIntervalSince1970,
            email: email
        )
        claims.groups = groups
        return claims
    }

    static func refusal(_ body: () async throws -> Void) async -> SignInRefusal.Reason? {
        do {
            try await body()
            return nil
        } catch let refusal as SignInRefusal {
            return refusal.reason
        } catch {
            Issue.record("not a refusal: \(error)")
            return nil
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aFirstSignInCreatesTheAccountWithItsGroupsRoleAndTheStateWorksOnce(database: TestDatabase) async throws {
        try await Self.withProvider(database) { settings in
            settings.groupsClaim = "groups"
            settings.groupRoles = [
                "vane-admins=admin", "vane-editors=editor:demo/staging", "vane-editors=editor:shop/*",
            ]
        } _: { sso, provider, accounts, store in
            let callback = try await Self.signIn(sso, provider) {
                Self.claims($0, $1, groups: ["staff", "vane-editors"])
            }
            let (user, next) = try await sso.finish(callback, logger: Self.logger)
            #expect(next == "/projects")
            #expect(user.email == "ada@example.com")
            #expect(user.name == "Ada Lovelace")
            #expect(user.role == .editor)
            #expect(user.environments.map(\.description) == ["demo/staging", "shop/*"])
            #expect(user.identity == ExternalIdentity(issuer: sso.issuer, subject: "subject-ada"))
            #expect(!user.mustChangePassword)
            // The confidential client authenticated with HTTP Basic.
            #expect(provider.basicAuthorization.withLock { $0 }?.hasPrefix("Basic ") == true)
            // The audit log names the person the provider named, as the creator of their account.
            let entry = try #require(
                try await store.audit(projectId: nil, environmentId: nil, pageSize: 5, pageToken: nil).items.first
            )
            #expect(entry.actor == user.actor)
            #expect(entry.summary.contains("through single sign-on"))

            // The same way back again (a replayed state) finds nothing.
            #expect(await Self.refusal { _ = try await sso.finish(callback, logger: Self.logger) } == .unknownState)

            // The next sign-in finds the account by issuer and subject and follows the groups.
            let again = try await Self.signIn(sso, provider) { Self.claims($0, $1, groups: ["vane-admins"]) }
            let (promoted, _) = try await sso.finish(again, logger: Self.logger)
            #expect(promoted.id == user.id)
            #expect(promoted.role == .admin)
            #expect(promoted.environments.isEmpty)
            #expect(try await accounts.store.users().count == 1)

            // Groups that map to nothing: no role, no session.
            let none = try await Self.signIn(sso, provider) { Self.claims($0, $1, groups: ["staff"]) }
            #expect(await Self.refusal { _ = try await sso.finish(none, logger: Self.logger) } == .noRole)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aWayBackSentManyTimesAtOnceSignsInOnce(database: TestDatabase) async throws {
        try await Self.withProvider(database) { sso, provider, accounts, _ in
            let callback = try await Self.signIn(sso, provider) { Self.claims($0, $1) }
            // Eight copies of one way back race for its state: exactly one signs in.
            let outcomes = await withTaskGroup(of: SignInRefusal.Reason?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await sso.finish(callback, logger: Self.logger)
                            return nil
                        } catch let refusal as SignInRefusal {
                            return refusal.reason
                        } catch {
                            Issue.record("not a refusal: \(error)")
                            return .providerUnreachable
                        }
                    }
                }
                var outcomes: [SignInRefusal.Reason?] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.filter { $0 == nil }.count == 1, "\(outcomes)")
            #expect(outcomes.filter { $0 == .unknownState }.count == 7, "\(outcomes)")
            #expect(try await accounts.store.users().count == 1)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func onlyAllowedDomainsGetAnAccount(database: TestDatabase) async throws {
        try await Self.withProvider(database) { sso, provider, accounts, _ in
            let callback = try await Self.signIn(sso, provider) { Self.claims($0, $1, email: "eve@elsewhere.example") }
            #expect(await Self.refusal { _ = try await sso.finish(callback, logger: Self.logger) } == .emailNotAllowed)
            let unverified = try await Self.signIn(sso, provider) {
                var claims = Self.claims($0, $1)
                claims.emailVerified = false
                return claims
            }
            #expect(
                await Self.refusal { _ = try await sso.finish(unverified, logger: Self.logger) } == .emailNotAllowed
            )
            #expect(try await accounts.store.users().isEmpty)
            // Without groups mappings, a new account is a viewer.
            let good = try await Self.signIn(sso, provider) { Self.claims($0, $1) }
            #expect(try await sso.finish(good, logger: Self.logger).user.role == .viewer)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anAccountAnAdminCreatedIsTiedToThePersonButNeverTheBreakGlassOne(database: TestDatabase) async throws {
        try await Self.withProvider(database, passwordSignIn: .breakGlassOnly(email: "root@example.com")) {
            settings in
            settings.allowedDomains = []
        } _: { sso, provider, accounts, _ in
            let (created, _) = try await accounts.create(
                email: "grace@partner.example",
                name: "Grace",
                role: .editor,
                environments: [.all],
                actor: AccountStoreTests.admin
            )
            let callback = try await Self.signIn(sso, provider) { Self.claims($0, $1, email: "grace@partner.example") }
            let (user, _) = try await sso.finish(callback, logger: Self.logger)
            #expect(user.id == created.id)
            #expect(user.role == .editor)
            #expect(!user.mustChangePassword)
            #expect(user.identity?.subject == "subject-ada")

            _ = try await accounts.create(
                email: "root@example.com",
                name: nil,
                role: .admin,
                environments: [],
                actor: AccountStoreTests.admin
            )
            let breakGlass = try await Self.signIn(sso, provider) {
                var claims = Self.claims($0, $1, email: "root@example.com")
                claims.sub = "someone-else"
                return claims
            }
            #expect(
                await Self.refusal { _ = try await sso.finish(breakGlass, logger: Self.logger) } == .accountUnusable
            )
            #expect(try await accounts.store.user(email: "root@example.com")?.user.identity == nil)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theWayBackMustMatchThisBrowserAndThisSignInsVerifier(database: TestDatabase) async throws {
        try await Self.withProvider(database) { sso, provider, accounts, _ in
            // A state this browser never got (login CSRF).
            var callback = try await Self.signIn(sso, provider) { Self.claims($0, $1) }
            callback.browserState = nil
            #expect(await Self.refusal { _ = try await sso.finish(callback, logger: Self.logger) } == .unknownState)

            // A code issued for another sign-in (injected): this sign-in's PKCE verifier does not
            // match its challenge, and the provider refuses the exchange.
            let victim = try await sso.start(next: "/")
            let attacker = try await Self.signIn(sso, provider) { Self.claims($0, $1) }
            let injected = SingleSignOn.Callback(
                state: victim.state,
                code: attacker.code,
                error: nil,
                errorDescription: nil,
                browserState: victim.state
            )
            #expect(await Self.refusal { _ = try await sso.finish(injected, logger: Self.logger) } == .providerRefused)

            // The provider's own refusal on the way back.
            let denied = try await sso.start(next: "/")
            let refused = SingleSignOn.Callback(
                state: denied.state,
                code: nil,
                error: "access_denied",
                errorDescription: "the user is not assigned to this application",
                browserState: denied.state
            )
            #expect(await Self.refusal { _ = try await sso.finish(refused, logger: Self.logger) } == .providerRefused)
            #expect(try await accounts.store.users().isEmpty)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func passwordSignInOffAdmitsOnlyTheBreakGlassAdmin(database: TestDatabase) async throws {
        for policy in [PasswordSignIn.nobody, .breakGlassOnly(email: "root@example.com")] {
            try await Self.withProvider(database, passwordSignIn: policy) { _, _, accounts, _ in
                var passwords: [String: String] = [:]
                for (email, role) in [("root@example.com", UserRole.admin), ("pat@example.com", .admin)] {
                    let (user, oneTime) = try await accounts.create(
                        email: email,
                        name: nil,
                        role: role,
                        environments: [],
                        actor: AccountStoreTests.admin
                    )
                    passwords[user.email] = oneTime
                }
                func signIn(_ email: String) async -> String? {
                    await Self.passwordRefusal(accounts, email: email, password: passwords[email] ?? "")
                }
                #expect(await signIn("pat@example.com")?.contains("password sign-in is turned off") == true)
                // Nor may they change a password they cannot use (the console hides the form).
                let pat = try #require(try await accounts.store.user(email: "pat@example.com")).user
                #expect(!accounts.mayUsePassword(pat))
                let (_, session) = try await accounts.startSession(user: pat, address: "127.0.0.1", userAgent: "test")
                do {
                    try await accounts.changePassword(
                        user: pat,
                        session: session,
                        current: passwords["pat@example.com"] ?? "",
                        new: "a long new passphrase 42"
                    )
                    Issue.record("a password change for an account that signs in only through the provider")
                } catch let error as AccountError {
                    #expect(error.message.contains("change your password at your identity provider"))
                }
                let root = try #require(try await accounts.store.user(email: "root@example.com")).user
                #expect(accounts.mayUsePassword(root) == (policy != .nobody))
                if policy == .nobody {
                    #expect(await signIn("root@example.com")?.contains("password sign-in is turned off") == true)
                } else {
                    #expect(await signIn("root@example.com") == nil)
                    // The break-glass email of an account that is no admin is refused all the same.
                    _ = try await accounts.store.updateUser(
                        id: try #require(try await accounts.store.user(email: "root@example.com")).user.id,
                        role: .viewer,
                        actor: AccountStoreTests.admin
                    )
                    #expect(await signIn("root@example.com")?.contains("only for the break-glass admin") == true)
                }
            }
        }
    }

    /// Why a password sign-in was refused; nil when it succeeded.
    static func passwordRefusal(_ accounts: Accounts, email: String, password: String) async -> String? {
        do {
            _ = try await accounts.signIn(email: email, password: password, address: "127.0.0.1", userAgent: "test")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func anUnreachableProviderIsARefusalNotACrash() async throws {
        try await ConfigStoreTests.withStore(.sqlite) { store, _ in
            var settings = SingleSignOnSettings()
            // A port nothing listens on: bound and closed again.
            settings.issuer = "http://127.0.0.1:9"
            settings.clientId = Self.client
            settings.redirectURL = "http://127.0.0.1:8080/sign-in/oidc/callback"
            let accounts = Accounts(
                store: AccountStore(engine: store.engine),
                hasher: PasswordHasher(cost: 4),
                secret: ServerSecret(APIKeySecret.generate(role: .admin)),
                idleTimeoutMinutes: 60,
                lifetimeHours: 24
            )
            let sso = SingleSignOn(settings: settings, accounts: accounts)
            #expect(await Self.refusal { _ = try await sso.start(next: "/") } == .providerUnreachable)
        }
    }

    @Test func settingsAreCheckedTogether() {
        var settings = SingleSignOnSettings()
        #expect(settings.problems().isEmpty)
        settings.clientId = "vane"
        settings.groupRoles = ["admins=owner", "editors=viewer:demo/*", "nothing"]
        settings.redirectURL = "https://vane.example.com/callback"
        settings.allowedDomains = ["example.com", "not a domain"]
        let fields = settings.problems().map(\.field)
        #expect(fields.contains(.issuer))
        #expect(fields.contains(.redirectURL))
        #expect(fields.filter { $0 == .groupRoles }.count == 4)
        #expect(fields.contains(.allowedDomains))
        settings.issuer = "http://id.example.com"
        #expect(settings.problems().contains { $0.field == .issuer && $0.message.contains("https") })
    }
}
