import Foundation

/// Why an account operation was refused, in words for the person at the form.
package struct AccountError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal.
    package enum Kind: Sendable, Equatable {
        /// The input is not acceptable (a weak password, a malformed email).
        case invalid
        /// Wrong email or password; deliberately does not say which.
        case wrongCredentials
        /// Too many failed attempts; try again after the given seconds.
        case throttled(retryAfterSeconds: Int)
    }

    package var kind: Kind
    package var message: String
    package var description: String { message }

    package static func invalid(_ message: String) -> AccountError { AccountError(kind: .invalid, message: message) }
}

/// The console's accounts: creating them, signing in and out, passwords and sessions. The API's
/// `/v1/users`, `vane users` and the console all go through here.
package final class Accounts: Sendable {
    package let store: AccountStore
    package let hasher: PasswordHasher
    package let throttle: SignInThrottle
    /// Signs device cookies.
    package let secret: ServerSecret
    /// A session ends after this long without a request.
    package let idleTimeoutMilliseconds: Int64
    /// A session ends this long after sign-in, however active.
    package let lifetimeMilliseconds: Int64
    /// Who may sign in with a password.
    package let passwordSignIn: PasswordSignIn

    package init(
        store: AccountStore,
        hasher: PasswordHasher,
        throttle: SignInThrottle = SignInThrottle(),
        secret: ServerSecret,
        idleTimeoutMinutes: Int,
        lifetimeHours: Int,
        passwordSignIn: PasswordSignIn = .everyone
    ) {
        self.store = store
        self.hasher = hasher
        self.throttle = throttle
        self.secret = secret
        self.passwordSignIn = passwordSignIn
        self.idleTimeoutMilliseconds = Int64(idleTimeoutMinutes) * 60_000
        self.lifetimeMilliseconds = Int64(lifetimeHours) * 3_600_000
    }

    /// A new session: the cookie's token (shown to the browser only) and the stored session.
    package struct SignIn: Sendable {
        package var token: String
        package var session: UserSession
        package var user: UserAccount
        /// A new ``DeviceCookie`` for the browser that signed in.
        package var deviceCookie: String
    }

    // MARK: Accounts

    /// Creates an account with a one-time password the person must change on first sign-in.
    /// - Returns: The account and its one-time password, to hand to the person once.
    package func create(
        email: String,
        name: String?,
        role: UserRole,
        environments: [EnvironmentGrant],
        actor: Actor
    ) async throws -> (user: UserAccount, oneTimePassword: String) {
        let email = email.trimmingCharacters(in: .whitespaces).lowercased()
        if let problem = Self.problem(withEmail: email) { throw AccountError.invalid(problem) }
        let name = (name?.trimmingCharacters(in: .whitespaces)).flatMap { $0.isEmpty ? nil : $0 } ?? email
        guard name.count <= 200 else { throw AccountError.invalid("a name can have at most 200 characters") }
        let password = Self.oneTimePassword()
        let user = try await store.createUser(
            email: email,
            name: name,
            role: role,
            environments: role == .editor ? environments : [],
            passwordHash: try await hasher.hash(password),
            mustChangePassword: true,
            actor: actor
        )
        return (user, password)
    }

    /// The first start's admin account, with the password the start wrote to its file.
    package func createFirstAdmin(email: String, password: String) async throws {
        try await store.createUser(
            email: email,
            name: "Administrator",
            role: .admin,
            environments: [],
            passwordHash: try await hasher.hash(password),
            mustChangePassword: true,
            actor: .system
        )
    }

    /// Gives an account a new one-time password and ends its sessions.
    package func resetPassword(userId: String, actor: Actor) async throws -> String {
        let password = Self.oneTimePassword()
        try await store.setPassword(
            userId: userId,
            passwordHash: try await hasher.hash(password),
            mustChange: true,
            keepSession: nil,
            actor: actor
        )
        return password
    }

    /// Reads an editor's environments from text: `project/environment`, `project/*` or `*`,
    /// separated by commas, spaces or new lines.
    package static func grants(_ text: String) throws(AccountError) -> [EnvironmentGrant] {
        var grants: [EnvironmentGrant] = []
        for item in text.split(whereSeparator: { $0 == "," || $0.isWhitespace }) {
            guard let grant = EnvironmentGrant(String(item)) else {
                throw AccountError.invalid(
                    "\"\(item.prefix(80))\" is not an environment: write project/environment, project/* or *"
                )
            }
            if !grants.contains(grant) { grants.append(grant) }
        }
        return grants
    }

    package static func problem(withEmail email: String) -> String? {
        guard !email.isEmpty else { return "an email is required" }
        guard email.count <= 254 else { return "an email can have at most 254 characters" }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }),
            !email.contains(where: { $0.isWhitespace || $0.isNewline || $0 == "<" || $0 == ">" })
        else { return "\"\(email.prefix(80))\" is not an email address (name@example.com)" }
        return nil
    }

    /// 20 characters from an alphabet without look-alikes (no 0/O, 1/l/I): about 110 bits.
    package static func oneTimePassword() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    // MARK: Signing in

    /// Checks an email and password and starts a session. The attempt is counted before the
    /// password is checked: against `deviceCookie`'s device when it is a valid one for this
    /// email, otherwise against the account and the address (``SignInThrottle``).
    /// - Throws: ``AccountError`` (wrong credentials, throttled, disabled account).
    package func signIn(
        email: String,
        password: String,
        address: String,
        userAgent: String,
        deviceCookie: String? = nil
    ) async throws -> SignIn {
        let email = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard passwordSignIn.admits(email: email) else {
            throw AccountError(
                kind: .wrongCredentials,
                message: "password sign-in is turned off on this server; sign in with single sign-on instead"
            )
        }
        let device = deviceCookie.flatMap { DeviceCookie.device(in: $0, email: email, secret: secret) }
        let reservation: SignInThrottle.Reservation
        switch throttle.reserve(SignInThrottle.budgets(email: email, address: address, device: device)) {
        case .success(let granted): reservation = granted
        case .failure(let refusal):
            throw AccountError(
                kind: .throttled(retryAfterSeconds: refusal.retryAfterSeconds),
                message: "too many failed sign-ins; try again in \(Self.duration(seconds: refusal.retryAfterSeconds))"
            )
        }
        let verified: (user: UserAccount, passwordHash: String)?
        do {
            let found = try await store.user(email: email)
            let matches = try await hasher.verify(String(password.prefix(200)), hash: found?.passwordHash)
            verified = matches ? found : nil
        } catch {
            throttle.settle(reservation, .withdrawn)
            throw error
        }
        guard let found = verified else {
            throttle.settle(reservation, .failed)
            throw AccountError(kind: .wrongCredentials, message: "the email or the password is wrong")
        }
        guard found.user.disableTime == nil else {
            throttle.settle(reservation, .withdrawn)
            throw AccountError(
                kind: .wrongCredentials,
                message: "this account is disabled; ask an admin to enable it"
            )
        }
        if case .breakGlassOnly = passwordSignIn, found.user.role != .admin {
            throttle.settle(reservation, .withdrawn)
            throw AccountError(
                kind: .wrongCredentials,
                message: "password sign-in is only for the break-glass admin account, and this account is not an admin"
            )
        }
        throttle.settle(reservation, .succeeded)
        let (token, session) = try await startSession(user: found.user, address: address, userAgent: userAgent)
        return SignIn(
            token: token,
            session: session,
            user: found.user,
            deviceCookie: DeviceCookie.make(email: found.user.email, secret: secret)
        )
    }

    /// Starts a session for a person whose identity is checked (a password here, an identity
    /// provider's ID token in VaneOIDC).
    /// - Returns: The cookie's token (shown to the browser only) and the stored session.
    package func startSession(
        user: UserAccount,
        address: String,
        userAgent: String
    ) async throws -> (token: String, session: UserSession) {
        let token = SessionToken.generate()
        let now = Clock.nowMilliseconds()
        let session = UserSession(
            tokenHash: SessionToken.hash(token),
            userId: user.id,
            csrfToken: SessionToken.generate(),
            createTime: now,
            lastSeenTime: now,
            address: String(address.prefix(100)),
            userAgent: String(userAgent.prefix(300))
        )
        try await store.createSession(session)
        // Browsers that never come back leave rows behind; a sign-in is rare enough to sweep.
        try await sweepExpiredSessions(now: now)
        return (token, session)
    }

    /// The live session a cookie's token belongs to, with its account; nil when the token is
    /// unknown, the session has expired (it is deleted then) or the account is disabled.
    package func session(
        token: String,
        now: Int64 = Clock.nowMilliseconds()
    ) async throws -> (UserSession, UserAccount)? {
        guard token.utf8.count <= 100 else { return nil }
        let hash = SessionToken.hash(token)
        guard let (session, user) = try await store.session(tokenHash: hash) else { return nil }
        if now - session.lastSeenTime > idleTimeoutMilliseconds || now - session.createTime > lifetimeMilliseconds {
            try await store.deleteSession(tokenHash: hash)
            return nil
        }
        guard user.disableTime == nil else { return nil }
        // One write a minute at most: last-seen only needs to be as exact as the idle timeout.
        if now - session.lastSeenTime > 60_000 { try await store.touchSession(tokenHash: hash, at: now) }
        return (session, user)
    }

    /// Whether `user` may sign in with a password at all (``PasswordSignIn``: everyone, only the
    /// break-glass admin, or nobody); the console offers a password change only then.
    package func mayUsePassword(_ user: UserAccount) -> Bool {
        guard passwordSignIn.admits(email: user.email.lowercased()) else { return false }
        if case .breakGlassOnly = passwordSignIn { return user.role == .admin }
        return true
    }

    /// Changes a person's own password after checking the current one; their other sessions end.
    /// Refused for a person who signs in only through single sign-on (``mayUsePassword(_:)``).
    package func changePassword(user: UserAccount, session: UserSession, current: String, new: String) async throws {
        guard mayUsePassword(user) else {
            throw AccountError.invalid(
                "you sign in through single sign-on, and password sign-in is turned off for your account; "
                    + "change your password at your identity provider"
            )
        }
        guard let stored = try await store.user(id: user.id),
            try await hasher.verify(String(current.prefix(200)), hash: stored.passwordHash)
        else { throw AccountError.invalid("the current password is wrong") }
        if let problem = PasswordHasher.problem(with: new, email: user.email) { throw AccountError.invalid(problem) }
        guard new != current else { throw AccountError.invalid("the new password must differ from the current one") }
        try await store.setPassword(
            userId: user.id,
            passwordHash: try await hasher.hash(new),
            mustChange: false,
            keepSession: session.tokenHash,
            actor: user.actor
        )
    }

    /// Deletes sessions past their idle or absolute expiry.
    package func sweepExpiredSessions(now: Int64 = Clock.nowMilliseconds()) async throws {
        try await store.deleteExpiredSessions(
            idleBefore: now - idleTimeoutMilliseconds,
            startedBefore: now - lifetimeMilliseconds
        )
    }

    package static func duration(seconds: Int) -> String {
        seconds < 90 ? "\(seconds) seconds" : "\((seconds + 59) / 60) minutes"
    }
}
