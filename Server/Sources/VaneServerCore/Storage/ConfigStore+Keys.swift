import Foundation
import Logging
import SQLKit
import VaneCore

// API keys: their ids and SHA-256 hashes (never the secrets), and revocation.
extension ConfigStore {
    /// Stores a new API key: its id and the SHA-256 of its secret, never the secret (the key
    /// index makes both and hands the secret out once).
    package func createKey(
        id: String,
        name: String,
        role: KeyRole,
        projectId: String?,
        environmentId: String?,
        keyHash: String,
        actor: Actor
    ) async throws -> StoredKey {
        let key = StoredKey(
            id: id,
            name: name,
            role: role,
            projectId: projectId,
            environmentId: environmentId,
            createTime: Clock.nowMilliseconds(),
            revokeTime: nil
        )
        try await engine.transaction { database in
            try await database.raw(
                """
                INSERT INTO api_keys (id, name, role, project_id, environment_id, key_hash, create_time) \
                VALUES (\(bind: key.id), \(bind: name), \(bind: role.rawValue), \(bind: projectId), \(bind: environmentId), \
                \(bind: keyHash), \(bind: key.createTime))
                """
            ).run()
            try await Self.insertAudit(
                database,
                actor: actor,
                action: .keyCreate,
                projectId: projectId,
                environmentId: environmentId,
                summary: "created \(role.rawValue) key \(name) (\(key.id))",
                details: ["keyId": .string(key.id), "role": .string(role.rawValue)]
            )
        }
        return key
    }

    /// Every key, newest first, without secrets.
    package func keys() async throws -> [StoredKey] {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT id, name, role, project_id, environment_id, create_time, revoke_time FROM api_keys ORDER BY create_time DESC, id"
            ).all().map(Self.storedKey)
        }
    }

    /// Every key with its SHA-256, for the in-memory key index.
    package func keyHashes() async throws -> [(hash: String, key: StoredKey)] {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT id, name, role, project_id, environment_id, create_time, revoke_time, key_hash FROM api_keys"
            ).all().map { row in (try row.decode(column: "key_hash", as: String.self), try Self.storedKey(row)) }
        }
    }

    /// Revokes a key; it authenticates nothing from then on.
    /// - Throws: ``StorageError/keyNotFound(_:)``.
    package func revokeKey(id: String, actor: Actor) async throws {
        let found = try await engine.transaction { database -> Bool in
            guard
                let row = try await database.raw(
                    "SELECT id, name, role, project_id, environment_id, create_time, revoke_time FROM api_keys WHERE id = \(bind: id)"
                ).first()
            else { return false }
            let key = try Self.storedKey(row)
            guard key.revokeTime == nil else { return true }
            try await database.raw(
                "UPDATE api_keys SET revoke_time = \(bind: Clock.nowMilliseconds()) WHERE id = \(bind: id)"
            ).run()
            try await Self.insertAudit(
                database,
                actor: actor,
                action: .keyRevoke,
                projectId: key.projectId,
                environmentId: key.environmentId,
                summary: "revoked \(key.role.rawValue) key \(key.name) (\(id))",
                details: ["keyId": .string(id)]
            )
            return true
        }
        if !found { throw StorageError.keyNotFound(id) }
    }
}
