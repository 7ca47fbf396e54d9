/// The authenticated caller of a request: the API key it presented.
struct Principal: Sendable {
    /// The key.
    var key: StoredKey

    /// Who this is, for the audit log.
    var actor: Actor { Actor(keyId: key.id, name: key.name) }

    /// Throws unless the key is an admin key.
    func requireAdmin() throws(AccessDenied) {
        guard key.role == .admin else {
            throw AccessDenied(
                message: "this needs an admin key; the key \"\(key.name)\" is a \(key.role.rawValue) key"
            )
        }
    }

    /// Throws unless the key may act on the environment with one of the roles (admin keys always may).
    func require(_ roles: Set<KeyRole>, on environment: EnvironmentKey) throws(AccessDenied) {
        if key.role == .admin { return }
        guard roles.contains(key.role) else {
            let allowed = roles.map(\.rawValue).sorted().joined(separator: " or ")
            throw AccessDenied(
                message: "this needs an admin or \(allowed) key; the key \"\(key.name)\" is a \(key.role.rawValue) key"
            )
        }
        guard key.projectId == environment.projectId, key.environmentId == environment.environmentId else {
            throw AccessDenied(
                message:
                    "the key \"\(key.name)\" belongs to \(key.projectId ?? "?")/\(key.environmentId ?? "?"), not \(environment)"
            )
        }
    }
}
