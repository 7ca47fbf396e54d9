import Logging
import NIOConcurrencyHelpers

/// The API keys, held in memory so that authenticating a request never waits for the database.
///
/// The index is refreshed from the store periodically (keys created or revoked on another node)
/// and on an unknown key — at most once a second, so a flood of bad keys cannot flood the
/// database.
package final class KeyIndex: Sendable {
    private struct State {
        package var keysByHash: [KeyDigest: StoredKey] = [:]
        package var hashesById: [String: KeyDigest] = [:]
        package var lastRefreshOnMiss: Int64 = 0
    }

    private let store: ConfigStore
    private let state = NIOLockedValueBox(State())

    /// Creates an index over a store; call ``refresh()`` before serving.
    package init(store: ConfigStore) {
        self.store = store
    }

    /// Reloads every key from the store.
    package func refresh() async throws {
        let keys = try await store.keyHashes()
        var byHash: [KeyDigest: StoredKey] = [:]
        var byId: [String: KeyDigest] = [:]
        // A stored hash that is not 64 hex digits matches no secret.
        for (hash, key) in keys {
            guard let digest = KeyDigest(hex: hash) else { continue }
            byHash[digest] = key
            byId[key.id] = digest
        }
        state.withLockedValue {
            $0.keysByHash = byHash
            $0.hashesById = byId
        }
    }

    /// The live key a secret belongs to; nil for an unknown or revoked key.
    package func authenticate(secret: String) async -> StoredKey? {
        let hash = KeyDigest(secret: secret)
        if let key = lookup(hash: hash) { return key.revokeTime == nil ? key : nil }
        let now = Clock.nowMilliseconds()
        let mayRefresh = state.withLockedValue { state -> Bool in
            guard now - state.lastRefreshOnMiss >= 1000 else { return false }
            state.lastRefreshOnMiss = now
            return true
        }
        guard mayRefresh, (try? await refresh()) != nil, let key = lookup(hash: hash) else { return nil }
        return key.revokeTime == nil ? key : nil
    }

    /// Looks a key up by the SHA-256 of the presented secret. Timing can depend only on that
    /// digest, which says nothing about any stored key: this is what makes the check safe
    /// against timing attacks without comparing secrets byte by byte.
    private func lookup(hash: KeyDigest) -> StoredKey? {
        state.withLockedValue { $0.keysByHash[hash] }
    }

    /// A key and its stored hash, by id (revoked keys included: the caller decides).
    package func key(id: String) -> (StoredKey, hash: String)? {
        state.withLockedValue { state in
            guard let hash = state.hashesById[id], let key = state.keysByHash[hash] else { return nil }
            return (key, hash.hex)
        }
    }

    /// Creates an API key (a new secret unless `secret` is given), stores its hash and serves it
    /// at once. Returns the key with its secret, which is never stored or shown again.
    @discardableResult
    package func createKey(
        name: String,
        role: KeyRole,
        projectId: String?,
        environmentId: String?,
        actor: Actor,
        secret: String? = nil
    ) async throws -> (key: StoredKey, secret: String) {
        let secret = secret ?? APIKeySecret.generate(role: role)
        let key = try await store.createKey(
            id: APIKeySecret.newIdentifier(),
            name: name,
            role: role,
            projectId: projectId,
            environmentId: environmentId,
            keyHash: APIKeySecret.hash(secret),
            actor: actor
        )
        insert(key, secret: secret)
        return (key, secret)
    }

    /// Adds a key just created on this node.
    package func insert(_ key: StoredKey, secret: String) {
        let hash = KeyDigest(secret: secret)
        state.withLockedValue {
            $0.keysByHash[hash] = key
            $0.hashesById[key.id] = hash
        }
    }

    /// Marks a key revoked on this node at once.
    package func revoke(id: String) {
        state.withLockedValue { state in
            guard let hash = state.hashesById[id] else { return }
            state.keysByHash[hash]?.revokeTime = Clock.nowMilliseconds()
        }
    }
}
