import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The console's accounts and sessions, on both engines: what several nodes share.
@Suite(.timeLimit(.minutes(5))) struct AccountStoreTests {
    static let admin = Actor(keyId: nil, userId: "u_admin", name: "root@example.com")

    static func withAccounts<R: Sendable>(
        _ database: TestDatabase,
        _ body: (Accounts, ConfigStore) async throws -> R
    ) async throws -> R {
        try await ConfigStoreTests.withStore(database) { store, _ in
            let accounts = Accounts(
                store: AccountStore(engine: store.engine),
                hasher: PasswordHasher(cost: 4),
                secret: ServerSecret(APIKeySecret.generate(role: .admin)),
                idleTimeoutMinutes: 60,
                lifetimeHours: 24
            )
            return try await body(accounts, store)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func accountsAreCreatedOnceAndFoundByEmailInAnyCase(database: TestDatabase) async throws {
        try await Self.withAccounts(database) { accounts, store in
            let (user, password) = try await accounts.create(
                email: " Ed@Example.com ",
                name: nil,
                role: .editor,
                environments: [EnvironmentGrant(projectId: "demo", environmentId: "staging")],
                actor: Self.admin
            )
            #expect(user.email == "ed@example.com")
            #expect(user.name == "ed@example.com")
            #expect(user.mustChangePassword)
            #expect(password.count == 20)
            let found = try #require(try await accounts.store.user(email: "ED@example.COM"))
            #expect(found.user == user)
            #expect(found.passwordHash.hasPrefix("$2"))
            #expect(!found.passwordHash.contains(password))
            await #expect(throws: StorageError.userExists("ed@example.com")) {
                try await accounts.create(
                    email: "ed@example.com",
                    name: nil,
                    role: .viewer,
                    environments: [],
                    actor: Self.admin
                )
            }
            await #expect(throws: AccountError.self) {
                try await accounts.create(
                    email: "not an email",
                    name: nil,
                    role: .viewer,
                    environments: [],
                    actor: Self.admin
                )
            }
            // A viewer's environments are not stored: only editors have grants.
            let (viewer, _) = try await accounts.create(
                email: "vi@example.com",
                name: "Vi",
                role: .viewer,
                environments: [.all],
                actor: Self.admin
            )
            #expect(viewer.environments.isEmpty)
            // Audited, naming the person who acted.
            let audit = try await store.audit(projectId: nil, environmentId: nil, pageSize: 10, pageToken: nil)
            let entry = try #require(audit.items.first { $0.action == "user.create" })
            #expect(entry.actor.userId == "u_admin")
            #expect(entry.actor.keyId == nil)
            #expect(entry.actor.name == "root@example.com")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func signInStartsASessionOthersCanLookUp(database: TestDatabase) async throws {
        try await Self.withAccounts(database) { accounts, _ in
            let (user, password) = try await accounts.create(
                email: "a@example.com",
                name: "A",
                role: .admin,
                environments: [],
                actor: .system
            )
            let signIn = try await accounts.signIn(
                email: "A@example.com",
                password: password,
                address: "10.0.0.1",
                userAgent: "test"
            )
            #expect(signIn.user.id == user.id)
            #expect(signIn.session.tokenHash == SessionToken.hash(signIn.token))
            // The token itself is not stored; its hash finds the session and the person.
            let (session, found) = try #require(try await accounts.session(token: signIn.token))
            #expect(found.id == user.id)
            #expect(session.csrfToken == signIn.session.csrfToken)
            #expect(try await accounts.session(token: "forged") == nil)
            #expect(try await accounts.session(token: String(repeating: "x", count: 5000)) == nil)

            do {
                _ = try await accounts.signIn(
                    email: "a@example.com",
                    password: "wrong",
                    address: "10.0.0.1",
                    userAgent: ""
                )
                Issue.record("a wrong password signed in")
            } catch let error as AccountError {
                #expect(error.kind == .wrongCredentials)
            }
            do {
                _ = try await accounts.signIn(
                    email: "nobody@example.com",
                    password: password,
                    address: "10.0.0.2",
                    userAgent: ""
                )
                Issue.record("an unknown email signed in")
            } catch let error as AccountError {
                // The same answer as a wrong password: the form does not tell which emails exist.
                #expect(error.message == "the email or the password is wrong")
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func sessionsExpireWhenIdleAndAfterTheirLifetime(database: TestDatabase) async throws {
        try await Self.withAccounts(database) { accounts, _ in
            let (_, password) = try await accounts.create(
                email: "b@example.com",
                name: nil,
                role: .viewer,
                environments: [],
                actor: .system
            )
            let first = try await accounts.signIn(
                email: "b@example.com",
                password: password,
                address: "a",
                userAgent: ""
            )
            let start = first.session.createTime
            // Used every 50 minutes: the idle timeout (60) never ends it...
            var now = start
            for _ in 0..<20 {
                now += 50 * 60_000
                if now - start > 24 * 3_600_000 { break }
                #expect(try await accounts.session(token: first.token, now: now) != nil)
            }
            // ...but the lifetime (24 h) does, and the row is gone.
            #expect(try await accounts.session(token: first.token, now: start + 24 * 3_600_000 + 1) == nil)
            #expect(try await accounts.store.session(tokenHash: first.session.tokenHash) == nil)

            let second = try await accounts.signIn(
                email: "b@example.com",
                password: password,
                address: "a",
                userAgent: ""
            )
            #expect(
                try await accounts.session(token: second.token, now: second.session.createTime + 61 * 60_000) == nil
            )
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func passwordChangesAndDisablingEndOtherSessions(database: TestDatabase) async throws {
        try await Self.withAccounts(database) { accounts, _ in
            let (user, password) = try await accounts.create(
                email: "c@example.com",
                name: nil,
                role: .editor,
                environments: [],
                actor: .system
            )
            let laptop = try await accounts.signIn(
                email: "c@example.com",
                password: password,
                address: "a",
                userAgent: "laptop"
            )
            let phone = try await accounts.signIn(
                email: "c@example.com",
                password: password,
                address: "b",
                userAgent: "phone"
            )
            #expect(try await accounts.store.sessions(userId: user.id).count == 2)

            await #expect(throws: AccountError.self) {
                try await accounts.changePassword(
                    user: user,
                    session: laptop.session,
                    current: "wrong",
                    new: "a fine new password"
                )
            }
            await #expect(throws: AccountError.self) {
                try await accounts.changePassword(user: user, session: laptop.session, current: password, new: "short")
            }
            try await accounts.changePassword(
                user: user,
                session: laptop.session,
                current: password,
                new: "a fine new password"
            )
            #expect(try await accounts.session(token: laptop.token) != nil)
            #expect(try await accounts.session(token: phone.token) == nil)
            let changed = try #require(try await accounts.store.user(id: user.id))
            #expect(!changed.user.mustChangePassword)
            await #expect(throws: AccountError.self) {
                _ = try await accounts.signIn(email: "c@example.com", password: password, address: "a", userAgent: "")
            }

            try await accounts.store.updateUser(id: user.id, disabled: true, actor: Self.admin)
            #expect(try await accounts.session(token: laptop.token) == nil)
            do {
                _ = try await accounts.signIn(
                    email: "c@example.com",
                    password: "a fine new password",
                    address: "a",
                    userAgent: ""
                )
                Issue.record("a disabled account signed in")
            } catch let error as AccountError {
                #expect(error.message.contains("disabled"))
            }
            let enabled = try await accounts.store.updateUser(
                id: user.id,
                role: .admin,
                environments: [.all],
                disabled: false,
                actor: Self.admin
            )
            #expect(enabled.disableTime == nil)
            #expect(enabled.role == .admin)
            await #expect(throws: StorageError.userNotFound("u_missing")) {
                try await accounts.store.updateUser(id: "u_missing", role: .viewer, actor: Self.admin)
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func resetPasswordGivesANewOneTimePassword(database: TestDatabase) async throws {
        try await Self.withAccounts(database) { accounts, _ in
            let (user, first) = try await accounts.create(
                email: "d@example.com",
                name: nil,
                role: .viewer,
                environments: [],
                actor: .system
            )
            let session = try await accounts.signIn(
                email: "d@example.com",
                password: first,
                address: "a",
                userAgent: ""
            )
            let second = try await accounts.resetPassword(userId: user.id, actor: Self.admin)
            #expect(second != first)
            #expect(try await accounts.session(token: session.token) == nil)
            let signIn = try await accounts.signIn(
                email: "d@example.com",
                password: second,
                address: "a",
                userAgent: ""
            )
            #expect(signIn.user.mustChangePassword)
        }
    }

    @Test func failedSignInsAreThrottledPerAccountAndPerAddress() throws {
        let throttle = SignInThrottle(perAccount: 3, perAddress: 5, perDevice: 2, windowMilliseconds: 60_000)
        func attempt(
            _ email: String,
            _ address: String,
            device: String? = nil,
            at now: Int64
        ) -> Result<SignInThrottle.Reservation, SignInThrottle.Refusal> {
            throttle.reserve(SignInThrottle.budgets(email: email, address: address, device: device), now: now)
        }
        for _ in 0..<3 { throttle.settle(try attempt("x@example.com", "1.1.1.1", at: 1000).get(), .failed, now: 1000) }
        #expect(throws: SignInThrottle.Refusal(retryAfterSeconds: 59)) {
            try attempt("X@example.com", "2.2.2.2", at: 2000).get()
        }
        throttle.settle(try attempt("y@example.com", "1.1.1.1", at: 2000).get(), .withdrawn, now: 2000)
        for _ in 0..<2 { throttle.settle(try attempt("z@example.com", "1.1.1.1", at: 3000).get(), .failed, now: 3000) }
        // The address has failed five times over two accounts: a third account is refused too.
        #expect((try? attempt("w@example.com", "1.1.1.1", at: 3000).get()) == nil)
        // The window passes.
        #expect((try? attempt("x@example.com", "2.2.2.2", at: 61_001).get()) != nil)
        // A success clears the account's failures, not the address's.
        throttle.settle(try attempt("z@example.com", "3.3.3.3", at: 3000).get(), .succeeded, now: 3000)
        #expect((try? attempt("z@example.com", "3.3.3.3", at: 3000).get()) != nil)

        // Attempts in progress count: with two of three left, a third open attempt is refused.
        let first = try attempt("v@example.com", "4.4.4.4", at: 5000).get()
        let second = try attempt("v@example.com", "4.4.4.4", at: 5000).get()
        _ = try attempt("v@example.com", "4.4.4.4", at: 5000).get()
        #expect((try? attempt("v@example.com", "4.4.4.4", at: 5000).get()) == nil)
        throttle.settle(first, .withdrawn, now: 5000)
        throttle.settle(second, .succeeded, now: 5000)
        #expect((try? attempt("v@example.com", "4.4.4.4", at: 5000).get()) != nil)

        // A device cookie has its own budget: the locked-out account does not stop it, and its
        // own failures lock only it.
        #expect((try? attempt("x@example.com", "2.2.2.2", device: "d1", at: 2000).get()) != nil)
        for _ in 0..<2 {
            throttle.settle(try attempt("u@example.com", "5.5.5.5", device: "d2", at: 2000).get(), .failed, now: 2000)
        }
        #expect((try? attempt("u@example.com", "5.5.5.5", device: "d2", at: 2000).get()) == nil)
        #expect((try? attempt("u@example.com", "5.5.5.5", device: "d3", at: 2000).get()) != nil)
    }

    @Test func passwordRules() {
        #expect(PasswordHasher.problem(with: "short", email: "a@b.c") != nil)
        #expect(
            PasswordHasher.problem(with: String(repeating: "ab", count: 40), email: "a@b.c")?.contains("72") == true
        )
        #expect(PasswordHasher.problem(with: "aaaaaaaaaaaaaa", email: "a@b.c") != nil)
        #expect(PasswordHasher.problem(with: "me@example.com", email: "ME@example.com") != nil)
        #expect(PasswordHasher.problem(with: "a fine new password", email: "a@b.c") == nil)
    }
}
