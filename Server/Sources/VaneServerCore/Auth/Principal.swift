/// Who makes a request: an API key, or a person signed in to the console. The API and the
/// console ask the same question — ``require(_:)`` — so a person can do in the console exactly
/// what their role allows, and nothing the API would refuse a key of the same standing.
package struct Principal: Sendable {
    /// The credential behind the request. Indirect, so a principal is one pointer: every request
    /// context holds one, and an event stream keeps its request's context while it lasts.
    package indirect enum Identity: Sendable, Hashable {
        /// An API key.
        case key(StoredKey)
        /// A person, through a console session.
        case user(UserAccount)
    }

    /// The credential.
    package var identity: Identity

    /// A key's principal.
    package init(key: StoredKey) {
        identity = .key(key)
    }

    /// A person's principal.
    package init(user: UserAccount) {
        identity = .user(user)
    }

    /// The key's or the person's id: what rate limits, stream caps and logs count by.
    package var id: String {
        switch identity {
        case .key(let key): key.id
        case .user(let user): user.id
        }
    }

    /// Who this is, for the audit log.
    package var actor: Actor {
        switch identity {
        case .key(let key): Actor(keyId: key.id, name: key.name)
        case .user(let user): user.actor
        }
    }

    /// Who this is as a change policy names them (``ChangeActor/matches(_:)``): the id, and a
    /// person's email and role.
    package var changeActor: ChangeActor {
        switch identity {
        case .key(let key): ChangeActor(actor: actor, id: key.id, email: nil, role: nil)
        case .user(let user): ChangeActor(actor: actor, id: user.id, email: user.email, role: user.role.rawValue)
        }
    }

    /// Whether ``require(_:)`` would let this principal do something.
    package func permits(_ permission: Permission) -> Bool {
        (try? require(permission)) != nil
    }

    /// Throws unless this principal may do something, saying who it is and what was needed.
    package func require(_ permission: Permission) throws(AccessDenied) {
        switch identity {
        case .key(let key): try Self.require(permission, key: key)
        case .user(let user): try Self.require(permission, user: user)
        }
    }

    /// The roles besides admin that may fetch, and read a template: made once, as every fetch asks.
    private static let fetchingRoles: Set<KeyRole> = [.client, .server]
    private static let templateReadingRoles: Set<KeyRole> = [.server]

    private static func require(_ permission: Permission, key: StoredKey) throws(AccessDenied) {
        if key.role == .admin { return }
        let allowed: Set<KeyRole>
        let environment: EnvironmentKey
        switch permission {
        case .fetch(let target):
            allowed = fetchingRoles
            environment = target
        case .readTemplate(let target):
            allowed = templateReadingRoles
            environment = target
        case .administer, .readHistory, .readAudit, .publish:
            throw AccessDenied(
                message: "this needs an admin key; the key \"\(key.name)\" is a \(key.role.rawValue) key"
            )
        }
        guard allowed.contains(key.role) else {
            let names = allowed.map(\.rawValue).sorted().joined(separator: " or ")
            throw AccessDenied(
                message: "this needs an admin or \(names) key; the key \"\(key.name)\" is a \(key.role.rawValue) key"
            )
        }
        guard key.projectId == environment.projectId, key.environmentId == environment.environmentId else {
            throw AccessDenied(
                message:
                    "the key \"\(key.name)\" belongs to \(key.projectId ?? "?")/\(key.environmentId ?? "?"), not \(environment)"
            )
        }
    }

    private static func require(_ permission: Permission, user: UserAccount) throws(AccessDenied) {
        guard user.disableTime == nil else {
            throw AccessDenied(message: "the account \(user.email) is disabled")
        }
        switch (permission, user.role) {
        case (_, .admin), (.fetch, _), (.readTemplate, _), (.readHistory, _), (.readAudit, _):
            return
        case (.publish(let environment), .editor):
            guard user.environments.contains(where: { $0.covers(environment) }) else {
                throw AccessDenied(
                    message: "\(user.email) may not change \(environment); an admin can grant it on the People page"
                )
            }
        case (.publish, .viewer):
            throw AccessDenied(message: "\(user.email) is a viewer; changing flags needs an editor or admin")
        case (.administer, _):
            throw AccessDenied(
                message: "this needs an admin; \(user.email) is \(user.role == .editor ? "an editor" : "a viewer")"
            )
        }
    }
}

/// Something a principal may be allowed to do.
package enum Permission: Sendable, Hashable {
    /// Manage projects, environments, API keys and people.
    case administer
    /// Read evaluated values of an environment (fetch, OFREP, streams, "who gets what").
    case fetch(EnvironmentKey)
    /// Read an environment's full template, conditions included.
    case readTemplate(EnvironmentKey)
    /// Read an environment's versions and diffs.
    case readHistory(EnvironmentKey)
    /// Read the audit log.
    case readAudit
    /// Publish or roll back an environment's template.
    case publish(EnvironmentKey)
}
