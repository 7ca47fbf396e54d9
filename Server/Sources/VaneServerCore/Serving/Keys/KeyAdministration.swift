/// Creating and revoking API keys, for the admin API and the console alike: the rules about
/// which key belongs where, and what a revocation ends at once.
package struct KeyAdministration: Sendable {
    package let store: ConfigStore
    package let keys: KeyIndex
    package let streamHub: StreamHub

    package init(store: ConfigStore, keys: KeyIndex, streamHub: StreamHub) {
        self.store = store
        self.keys = keys
        self.streamHub = streamHub
    }

    /// A key that cannot be created as asked.
    package struct Refusal: Error, Sendable, Equatable {
        package var message: String
    }

    /// The most characters a key's name may have.
    package static let maximumNameLength = 100

    /// Creates a key: admin keys work everywhere, server and client keys in one existing
    /// environment. Returns the key and its secret, shown once.
    /// - Throws: ``Refusal`` for a bad name or scope; ``StorageError`` for a missing environment.
    package func create(
        name: String,
        role: KeyRole,
        projectId: String?,
        environmentId: String?,
        actor: Actor
    ) async throws -> (key: StoredKey, secret: String) {
        guard name.count <= Self.maximumNameLength, !name.contains(where: \.isNewline) else {
            throw Refusal(message: "a key's name is one line of at most \(Self.maximumNameLength) characters")
        }
        if role == .admin {
            guard projectId == nil, environmentId == nil else {
                throw Refusal(message: "admin keys work on every project; leave out project and environment")
            }
        } else {
            guard let projectId, let environmentId else {
                throw Refusal(message: "\(role.rawValue) keys belong to one environment: give project and environment")
            }
            guard try await store.environment(projectId: projectId, id: environmentId) != nil else {
                throw StorageError.environmentNotFound(project: projectId, environment: environmentId)
            }
        }
        return try await keys.createKey(
            name: name,
            role: role,
            projectId: projectId,
            environmentId: environmentId,
            actor: actor
        )
    }

    /// Revokes a key: it authenticates nothing from now on, and its open event streams on this
    /// node end now (other nodes end theirs at their next heartbeat after their key index hears
    /// of it).
    /// - Throws: ``StorageError/keyNotFound(_:)``.
    package func revoke(id: String, actor: Actor) async throws {
        try await store.revokeKey(id: id, actor: actor)
        keys.revoke(id: id)
        streamHub.closeStreams(ofKey: id)
    }
}
