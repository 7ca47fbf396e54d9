import NIOConcurrencyHelpers
import SQLKit
import VaneAuthoring
import VaneCore

/// Console drafts and saved contexts, in the same database as the templates, so every node sees
/// the same drafts: a person can reload on another node and find their work, and editors see
/// who else has a draft open.
///
/// Drafts are not audited: nothing anyone's apps read changes until the draft is published, and
/// the publish is audited like any other.
package final class DraftStore: Sendable {
    /// The database.
    package let engine: DatabaseEngine
    /// Drafts decoded on this node, by person and environment, with the stored text they were
    /// decoded from: every console page of an environment reads the person's draft, and decoding
    /// a large template costs more than the rest of the page. A draft whose text changed (saved
    /// here or on another node) is decoded again.
    private let decoded = NIOLockedValueBox<DecodedDrafts>(DecodedDrafts())
    /// How many decoded drafts a node keeps.
    fileprivate static let decodedLimit = 64

    /// A store over an opened, migrated database (``ConfigStore`` migrates it).
    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    // MARK: Drafts

    /// A person's draft of an environment, if they have one.
    package func draft(_ environment: EnvironmentKey, userId: String) async throws -> Draft? {
        try await engine.withSession { database in
            guard
                let row = try await database.raw(
                    """
                    SELECT base_version, template, change_count, create_time, update_time FROM drafts \
                    WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) \
                    AND user_id = \(bind: userId)
                    """
                ).first()
            else { return nil }
            let text = try row.decode(column: "template", as: String.self)
            let cacheKey = environment.personKey(userId)
            let template: ConfigTemplate
            let revision: UInt64
            if let cached = self.decoded.withLockedValue({ $0.entries[cacheKey] }), cached.text == text {
                (template, revision) = (cached.template, cached.revision)
            } else {
                template = try ConfigTemplate(data: Array(text.utf8))
                revision = self.decoded.withLockedValue { $0.insert(text: text, template: template, at: cacheKey) }
            }
            return Draft(
                environment: environment,
                userId: userId,
                baseVersion: try row.decode(column: "base_version", as: Int64.self),
                template: template,
                changeCount: try row.decode(column: "change_count", as: Int.self),
                createTime: try row.decode(column: "create_time", as: Int64.self),
                updateTime: try row.decode(column: "update_time", as: Int64.self),
                revision: revision
            )
        }
    }

    /// Every draft of an environment, most recently saved first.
    package func drafts(_ environment: EnvironmentKey) async throws -> [DraftSummary] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT d.user_id, u.name, u.email, d.base_version, d.change_count, d.update_time FROM drafts d \
                JOIN users u ON u.id = d.user_id \
                WHERE d.project_id = \(bind: environment.projectId) AND d.environment_id = \(bind: environment.environmentId) \
                ORDER BY d.update_time DESC, u.email
                """
            ).all().map { row in
                DraftSummary(
                    userId: try row.decode(column: "user_id", as: String.self),
                    userName: try row.decode(column: "name", as: String.self),
                    email: try row.decode(column: "email", as: String.self),
                    baseVersion: try row.decode(column: "base_version", as: Int64.self),
                    changeCount: try row.decode(column: "change_count", as: Int.self),
                    updateTime: try row.decode(column: "update_time", as: Int64.self)
                )
            }
        }
    }

    /// Creates or replaces a person's draft. The creation time of an existing draft is kept.
    /// - Returns: The revision the saved draft is read back with on this node (it is kept
    ///   decoded, so the next page does not decode it again).
    @discardableResult
    package func save(_ draft: Draft) async throws -> UInt64 {
        let text = draft.template.serialized(.compact)
        try await engine.withSession { database in
            try await database.raw(
                """
                INSERT INTO drafts (project_id, environment_id, user_id, base_version, template, change_count, create_time, update_time) \
                VALUES (\(bind: draft.environment.projectId), \(bind: draft.environment.environmentId), \
                \(bind: draft.userId), \(bind: draft.baseVersion), \(bind: text), \(bind: draft.changeCount), \
                \(bind: draft.createTime), \(bind: draft.updateTime)) \
                ON CONFLICT (project_id, environment_id, user_id) DO UPDATE SET \
                base_version = excluded.base_version, template = excluded.template, \
                change_count = excluded.change_count, update_time = excluded.update_time
                """
            ).run()
        }
        let cacheKey = draft.personKey
        return decoded.withLockedValue { $0.insert(text: text, template: draft.template, at: cacheKey) }
    }

    /// Throws a person's draft away (after publishing it, or on request).
    package func discard(_ environment: EnvironmentKey, userId: String) async throws {
        try await engine.withSession { database in
            try await database.raw(
                """
                DELETE FROM drafts WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId) AND user_id = \(bind: userId)
                """
            ).run()
        }
    }

    // MARK: Saved contexts

    /// A project's saved contexts, by name.
    package func savedContexts(projectId: String) async throws -> [SavedContext] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT name, context, create_time FROM saved_contexts WHERE project_id = \(bind: projectId) ORDER BY name
                """
            ).all().map { row in
                let text = try row.decode(column: "context", as: String.self)
                return SavedContext(
                    projectId: projectId,
                    name: try row.decode(column: "name", as: String.self),
                    context: try JSONValue.parse(text),
                    createTime: try row.decode(column: "create_time", as: Int64.self)
                )
            }
        }
    }

    /// Saves a context under a name, replacing one of the same name.
    package func saveContext(_ context: SavedContext, userId: String?) async throws {
        try await engine.withSession { database in
            try await database.raw(
                """
                INSERT INTO saved_contexts (project_id, name, context, create_user_id, create_time) \
                VALUES (\(bind: context.projectId), \(bind: context.name), \(bind: context.context.serialized(.compact)), \
                \(bind: userId), \(bind: context.createTime)) \
                ON CONFLICT (project_id, name) DO UPDATE SET context = excluded.context, \
                create_user_id = excluded.create_user_id, create_time = excluded.create_time
                """
            ).run()
        }
    }

    /// Deletes a saved context.
    package func deleteContext(projectId: String, name: String) async throws {
        try await engine.withSession { database in
            try await database.raw(
                "DELETE FROM saved_contexts WHERE project_id = \(bind: projectId) AND name = \(bind: name)"
            ).run()
        }
    }
}

/// The drafts a node keeps decoded, each with the text it was decoded from and its revision.
private struct DecodedDrafts {
    package var entries: [String: (text: String, template: ConfigTemplate, revision: UInt64)] = [:]
    private var lastRevision: UInt64 = 0

    /// Keeps a decoded draft under a new revision, and returns the revision.
    package mutating func insert(text: String, template: ConfigTemplate, at key: String) -> UInt64 {
        if entries.count >= DraftStore.decodedLimit, entries[key] == nil { entries.removeAll() }
        lastRevision += 1
        entries[key] = (text, template, lastRevision)
        return lastRevision
    }
}
