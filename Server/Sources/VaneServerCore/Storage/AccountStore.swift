import Foundation
package import SQLKit
package import VaneCore

/// The console's people and their sessions, in the same database as everything else, so every
/// node sees the same accounts and a session started on one node works on all of them.
///
/// Changes to accounts are audited in the same log as publishes; sessions are not (signing in
/// is not a change to anything users of the apps can notice).
package final class AccountStore: Sendable {
    /// The database.
    package let engine: DatabaseEngine

    /// A store over an opened, migrated database (``ConfigStore`` migrates it).
    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    private static let userColumns =
        "id, email, name, role, environments, password_hash, must_change_password, create_time, password_time, disable_time, oidc_issuer, oidc_subject"
    /// The same columns of `users u`, for joins.
    private static let joinedUserColumns = userColumns.split(separator: ",")
        .map { "u." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")

    // MARK: Users

    /// Creates an account; `actor` nil names the new account's person as its creator.
    /// - Throws: ``StorageError/userExists(_:)`` when the email has one.
    @discardableResult
    package func createUser(
        email: String,
        name: String,
        role: UserRole,
        environments: [EnvironmentGrant],
        passwordHash: String,
        mustChangePassword: Bool,
        identity: ExternalIdentity? = nil,
        actor: Actor?
    ) async throws -> UserAccount {
        let now = Clock.nowMilliseconds()
        let id = Self.newIdentifier()
        let user = UserAccount(
            id: id,
            email: email.lowercased(),
            name: name,
            role: role,
            environments: environments,
            mustChangePassword: mustChangePassword,
            createTime: now,
            passwordTime: now,
            disableTime: nil,
            identity: identity
        )
        // No actor: the person creates their own account at their first single sign-on.
        let actor = actor ?? user.actor
        do {
            try await engine.transaction { database in
                try await database.raw(
                    """
                    INSERT INTO users (\(unsafeRaw: Self.userColumns)) VALUES (\(bind: user.id), \(bind: user.email), \
                    \(bind: name), \(bind: role.rawValue), \(bind: Self.grantsText(environments)), \(bind: passwordHash), \
                    \(bind: mustChangePassword ? 1 : 0), \(bind: now), \(bind: now), \(bind: Int64?.none), \
                    \(bind: identity?.issuer), \(bind: identity?.subject))
                    """
                ).run()
                let through = identity.map { " through single sign-on (\($0.issuer))" } ?? ""
                try await ConfigStore.insertAudit(
                    database,
                    actor: actor,
                    action: .userCreate,
                    projectId: nil,
                    environmentId: nil,
                    summary: "created \(role.rawValue) account \(user.email) (\(user.id))\(through)",
                    details: Self.auditDetails(user)
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.userExists(user.email)
        }
        return user
    }

    /// The account a provider's person signed in to before, by issuer and subject.
    package func user(identity: ExternalIdentity) async throws -> UserAccount? {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT \(unsafeRaw: Self.userColumns) FROM users \
                WHERE oidc_issuer = \(bind: identity.issuer) AND oidc_subject = \(bind: identity.subject)
                """
            ).first().map(Self.user)
        }
    }

    /// Ties an account to a provider's person (their first single sign-on to an account an
    /// admin created for their email), audited as the person's own change.
    /// - Throws: ``StorageError/userNotFound(_:)``; ``StorageError/userExists(_:)`` when the
    ///   account is tied to another person already.
    package func link(userId: String, to identity: ExternalIdentity) async throws -> UserAccount {
        try await engine.transaction { database in
            guard
                var user = try await database.raw(
                    "SELECT \(unsafeRaw: Self.userColumns) FROM users WHERE id = \(bind: userId)"
                ).first().map(Self.user)
            else { throw StorageError.userNotFound(userId) }
            guard user.identity == nil else { throw StorageError.userExists(user.email) }
            try await database.raw(
                """
                UPDATE users SET oidc_issuer = \(bind: identity.issuer), oidc_subject = \(bind: identity.subject), \
                must_change_password = 0 WHERE id = \(bind: userId)
                """
            ).run()
            // The provider checked who this is: a one-time password an admin handed out is moot.
            user.identity = identity
            user.mustChangePassword = false
            try await ConfigStore.insertAudit(
                database,
                actor: user.actor,
                action: .userUpdate,
                projectId: nil,
                environmentId: nil,
                summary: "\(user.email) signed in through single sign-on (\(identity.issuer)) for the first time",
                details: Self.auditDetails(user)
            )
            return user
        }
    }

    /// Every account, by email.
    package func users() async throws -> [UserAccount] {
        try await engine.withSession { database in
            try await database.raw("SELECT \(unsafeRaw: Self.userColumns) FROM users ORDER BY email").all().map {
                try Self.user($0)
            }
        }
    }

    /// An account and its password hash, by id.
    package func user(id: String) async throws -> (user: UserAccount, passwordHash: String)? {
        try await engine.withSession { database in
            try await database.raw("SELECT \(unsafeRaw: Self.userColumns) FROM users WHERE id = \(bind: id)").first()
                .map { (try Self.user($0), try $0.decode(column: "password_hash", as: String.self)) }
        }
    }

    /// An account and its password hash, by email (any case).
    package func user(email: String) async throws -> (user: UserAccount, passwordHash: String)? {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT \(unsafeRaw: Self.userColumns) FROM users WHERE email = \(bind: email.lowercased())"
            ).first().map { (try Self.user($0), try $0.decode(column: "password_hash", as: String.self)) }
        }
    }

    /// Changes an account's role, environments, or whether it is disabled; disabling it also
    /// ends its sessions.
    /// - Throws: ``StorageError/userNotFound(_:)``.
    @discardableResult
    package func updateUser(
        id: String,
        role: UserRole? = nil,
        environments: [EnvironmentGrant]? = nil,
        disabled: Bool? = nil,
        actor: Actor
    ) async throws -> UserAccount {
        try await engine.transaction { database in
            guard
                var user = try await database.raw(
                    "SELECT \(unsafeRaw: Self.userColumns) FROM users WHERE id = \(bind: id)"
                ).first().map(Self.user)
            else { throw StorageError.userNotFound(id) }
            let before = user
            if let role { user.role = role }
            if let environments { user.environments = environments }
            if let disabled { user.disableTime = disabled ? (user.disableTime ?? Clock.nowMilliseconds()) : nil }
            guard user != before else { return user }
            try await database.raw(
                """
                UPDATE users SET role = \(bind: user.role.rawValue), environments = \(bind: Self.grantsText(user.environments)), \
                disable_time = \(bind: user.disableTime) WHERE id = \(bind: id)
                """
            ).run()
            if user.disableTime != nil {
                try await database.raw("DELETE FROM sessions WHERE user_id = \(bind: id)").run()
            }
            var changes: [String] = []
            if user.role != before.role { changes.append("role \(before.role.rawValue) → \(user.role.rawValue)") }
            if user.environments != before.environments {
                changes.append("environments \(user.environments.map(\.description).joined(separator: ", "))")
            }
            if user.disableTime != before.disableTime {
                changes.append(user.disableTime == nil ? "enabled" : "disabled")
            }
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .userUpdate,
                projectId: nil,
                environmentId: nil,
                summary: "changed \(user.email): \(changes.joined(separator: "; "))",
                details: Self.auditDetails(user)
            )
            return user
        }
    }

    /// Sets an account's password hash and ends its sessions, except the one that changed it.
    /// - Parameters:
    ///   - mustChange: True when an admin reset it (the person chooses their own on next sign-in).
    ///   - keepSession: The session of the person changing their own password.
    /// - Throws: ``StorageError/userNotFound(_:)``.
    package func setPassword(
        userId: String,
        passwordHash: String,
        mustChange: Bool,
        keepSession: String?,
        actor: Actor
    ) async throws {
        try await engine.transaction { database in
            guard
                let user = try await database.raw(
                    "SELECT \(unsafeRaw: Self.userColumns) FROM users WHERE id = \(bind: userId)"
                ).first().map(Self.user)
            else { throw StorageError.userNotFound(userId) }
            try await database.raw(
                """
                UPDATE users SET password_hash = \(bind: passwordHash), must_change_password = \(bind: mustChange ? 1 : 0), \
                password_time = \(bind: Clock.nowMilliseconds()) WHERE id = \(bind: userId)
                """
            ).run()
            try await database.raw(
                "DELETE FROM sessions WHERE user_id = \(bind: userId) AND token_hash <> \(bind: keepSession ?? "")"
            ).run()
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .userPassword,
                projectId: nil,
                environmentId: nil,
                summary: actor.userId == userId
                    ? "\(user.email) changed their password" : "reset the password of \(user.email)",
                details: ["userId": .string(userId)]
            )
        }
    }

    // MARK: Sessions

    /// Stores a new session.
    package func createSession(_ session: UserSession) async throws {
        try await engine.withSession { database in
            try await database.raw(
                """
                INSERT INTO sessions (token_hash, user_id, csrf_token, create_time, last_seen_time, address, user_agent) \
                VALUES (\(bind: session.tokenHash), \(bind: session.userId), \(bind: session.csrfToken), \
                \(bind: session.createTime), \(bind: session.lastSeenTime), \(bind: session.address), \(bind: session.userAgent))
                """
            ).run()
        }
    }

    /// A session and its account, by the hash of the cookie's token.
    package func session(tokenHash: String) async throws -> (session: UserSession, user: UserAccount)? {
        try await engine.withSession { database in
            guard
                let row = try await database.raw(
                    """
                    SELECT s.token_hash, s.user_id, s.csrf_token, s.create_time AS session_create_time, s.last_seen_time, \
                    s.address, s.user_agent, \(unsafeRaw: Self.joinedUserColumns) \
                    FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = \(bind: tokenHash)
                    """
                ).first()
            else { return nil }
            let session = UserSession(
                tokenHash: try row.decode(column: "token_hash", as: String.self),
                userId: try row.decode(column: "user_id", as: String.self),
                csrfToken: try row.decode(column: "csrf_token", as: String.self),
                createTime: try row.decode(column: "session_create_time", as: Int64.self),
                lastSeenTime: try row.decode(column: "last_seen_time", as: Int64.self),
                address: try row.decode(column: "address", as: String.self),
                userAgent: try row.decode(column: "user_agent", as: String.self)
            )
            return (session, try Self.user(row))
        }
    }

    /// Records that a session was used.
    package func touchSession(tokenHash: String, at time: Int64) async throws {
        try await engine.withSession { database in
            try await database.raw(
                "UPDATE sessions SET last_seen_time = \(bind: time) WHERE token_hash = \(bind: tokenHash)"
            ).run()
        }
    }

    /// A person's sessions, newest first.
    package func sessions(userId: String) async throws -> [UserSession] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT token_hash, user_id, csrf_token, create_time, last_seen_time, address, user_agent FROM sessions \
                WHERE user_id = \(bind: userId) ORDER BY create_time DESC
                """
            ).all().map { row in
                UserSession(
                    tokenHash: try row.decode(column: "token_hash", as: String.self),
                    userId: try row.decode(column: "user_id", as: String.self),
                    csrfToken: try row.decode(column: "csrf_token", as: String.self),
                    createTime: try row.decode(column: "create_time", as: Int64.self),
                    lastSeenTime: try row.decode(column: "last_seen_time", as: Int64.self),
                    address: try row.decode(column: "address", as: String.self),
                    userAgent: try row.decode(column: "user_agent", as: String.self)
                )
            }
        }
    }

    /// Ends one session (sign out).
    package func deleteSession(tokenHash: String) async throws {
        try await engine.withSession { database in
            try await database.raw("DELETE FROM sessions WHERE token_hash = \(bind: tokenHash)").run()
        }
    }

    /// Ends every session of a person (sign out everywhere).
    package func deleteSessions(userId: String) async throws {
        try await engine.withSession { database in
            try await database.raw("DELETE FROM sessions WHERE user_id = \(bind: userId)").run()
        }
    }

    /// Deletes sessions idle since `idleBefore` or started before `startedBefore`.
    package func deleteExpiredSessions(idleBefore: Int64, startedBefore: Int64) async throws {
        try await engine.withSession { database in
            try await database.raw(
                "DELETE FROM sessions WHERE last_seen_time < \(bind: idleBefore) OR create_time < \(bind: startedBefore)"
            ).run()
        }
    }

    // MARK: Rows

    package static func user(_ row: any SQLRow) throws -> UserAccount {
        let grants = try row.decode(column: "environments", as: String.self)
        return UserAccount(
            id: try row.decode(column: "id", as: String.self),
            email: try row.decode(column: "email", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            role: UserRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .viewer,
            environments: Self.grants(grants),
            mustChangePassword: try row.decode(column: "must_change_password", as: Int64.self) != 0,
            createTime: try row.decode(column: "create_time", as: Int64.self),
            passwordTime: try row.decode(column: "password_time", as: Int64.self),
            disableTime: try row.decode(column: "disable_time", as: Int64?.self),
            identity: try Self.identity(row)
        )
    }

    private static func identity(_ row: any SQLRow) throws -> ExternalIdentity? {
        guard let issuer = try row.decode(column: "oidc_issuer", as: String?.self),
            let subject = try row.decode(column: "oidc_subject", as: String?.self)
        else { return nil }
        return ExternalIdentity(issuer: issuer, subject: subject)
    }

    /// Grants as stored: a JSON array of strings.
    package static func grantsText(_ grants: [EnvironmentGrant]) -> String {
        JSONValue.array(grants.map { .string($0.description) }).serialized(.compact)
    }

    package static func grants(_ text: String) -> [EnvironmentGrant] {
        guard case .array(let items)? = try? JSONValue.parse(text) else { return [] }
        return items.compactMap { item in
            guard case .string(let text) = item else { return nil }
            return EnvironmentGrant(text)
        }
    }

    package static func auditDetails(_ user: UserAccount) -> JSONValue {
        [
            "userId": .string(user.id), "email": .string(user.email), "role": .string(user.role.rawValue),
            "environments": .array(user.environments.map { .string($0.description) }),
            "disabled": .bool(user.disableTime != nil),
            "issuer": user.identity.map { .string($0.issuer) } ?? .null,
            "subject": user.identity.map { .string($0.subject) } ?? .null,
        ]
    }

    /// A short public id for an account (`u_` + 12 hex characters).
    package static func newIdentifier() -> String {
        RandomBytes.identifier(prefix: "u_")
    }
}
