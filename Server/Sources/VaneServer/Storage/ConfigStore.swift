import Foundation
import Logging
import SQLKit
import VaneAuthoring
import VaneCore

/// Vane's data: projects, environments, their immutable template history, API keys and the audit
/// log — one implementation over SQLite and PostgreSQL.
///
/// A publish is one transaction: the version row, the audit entry and any pruning commit together
/// or not at all. The primary key (project, environment, version number) is the concurrency
/// control: two publishers racing for the same number cannot both win, on either engine.
final class ConfigStore: Sendable {
    /// The database.
    let engine: DatabaseEngine
    /// How many versions to keep per environment; nil keeps every version.
    let retainedVersions: Int?
    /// Publishes on this node queue here before they take a database connection. On PostgreSQL
    /// a publisher waits for the environment's row lock while holding a pooled connection, so
    /// twenty concurrent publishes would otherwise hold the whole pool and starve every other
    /// query (fetches' key refreshes, the poller) until the pool's request timeout fails them.
    private let publishQueue = AsyncLock()

    /// Opens the store and brings its schema up to date.
    init(engine: DatabaseEngine, retainedVersions: Int? = nil) async throws {
        self.engine = engine
        self.retainedVersions = retainedVersions
        // Another process migrating the same SQLite file can hold its write lock past the busy
        // timeout (a slow disk, a sanitizer run); each migration step checks inside its own
        // transaction whether it is still needed, so running again is safe.
        for attempt in 1...Self.migrationAttempts {
            do {
                try await Migrations.run(on: engine)
                return
            } catch  where StoreErrors.isBusy(error) && attempt < Self.migrationAttempts {
                continue
            }
        }
    }

    /// How many times opening a store tries to migrate while SQLite reports the file busy.
    static let migrationAttempts = 4

    // MARK: Projects and environments

    /// Creates a project.
    /// - Throws: ``StorageError/projectExists(_:)``.
    @discardableResult
    func createProject(id: String, name: String, actor: Actor) async throws -> Project {
        let project = Project(id: id, name: name, createTime: Clock.nowMilliseconds())
        do {
            try await engine.transaction { database in
                try await database.raw(
                    "INSERT INTO projects (id, name, create_time) VALUES (\(bind: id), \(bind: name), \(bind: project.createTime))"
                ).run()
                try await Self.insertAudit(
                    database,
                    actor: actor,
                    action: .projectCreate,
                    projectId: id,
                    environmentId: nil,
                    summary: "created project \(id)",
                    details: ["name": .string(name)]
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.projectExists(id)
        }
        return project
    }

    /// Every project, by id.
    func projects() async throws -> [Project] {
        try await engine.withSession { database in
            try await database.raw("SELECT id, name, create_time FROM projects ORDER BY id").all().map(Self.project)
        }
    }

    /// The project with this id.
    func project(id: String) async throws -> Project? {
        try await engine.withSession { database in
            try await database.raw("SELECT id, name, create_time FROM projects WHERE id = \(bind: id)").first().map(
                Self.project
            )
        }
    }

    /// Creates an environment in a project.
    /// - Throws: ``StorageError/projectNotFound(_:)``, ``StorageError/environmentExists(project:environment:)``.
    @discardableResult
    func createEnvironment(projectId: String, id: String, name: String, actor: Actor) async throws -> Environment {
        guard try await project(id: projectId) != nil else { throw StorageError.projectNotFound(projectId) }
        let environment = Environment(
            projectId: projectId,
            id: id,
            name: name,
            createTime: Clock.nowMilliseconds(),
            templateVersion: 0
        )
        do {
            try await engine.transaction { database in
                try await database.raw(
                    """
                    INSERT INTO environments (project_id, id, name, create_time) \
                    VALUES (\(bind: projectId), \(bind: id), \(bind: name), \(bind: environment.createTime))
                    """
                ).run()
                try await Self.insertAudit(
                    database,
                    actor: actor,
                    action: .environmentCreate,
                    projectId: projectId,
                    environmentId: id,
                    summary: "created environment \(projectId)/\(id)",
                    details: ["name": .string(name)]
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.environmentExists(project: projectId, environment: id)
        }
        return environment
    }

    /// Throws unless the environment exists, saying whether its project does.
    /// - Throws: ``StorageError/projectNotFound(_:)``, ``StorageError/environmentNotFound(project:environment:)``.
    func requireEnvironment(_ key: EnvironmentKey) async throws {
        guard try await environment(projectId: key.projectId, id: key.environmentId) == nil else { return }
        if try await project(id: key.projectId) == nil { throw StorageError.projectNotFound(key.projectId) }
        throw StorageError.environmentNotFound(project: key.projectId, environment: key.environmentId)
    }

    /// The environment's live template and its version (0 and an empty template before the first
    /// publish), the environment checked to exist.
    /// - Throws: ``StorageError`` when the project or environment does not exist.
    func liveTemplate(_ environment: EnvironmentKey) async throws -> (template: ConfigTemplate, version: Int64) {
        try await requireEnvironment(environment)
        let latest = try await latestVersion(projectId: environment.projectId, environmentId: environment.environmentId)
        return (latest?.template ?? ConfigTemplate(), latest?.number ?? 0)
    }

    /// A project's environments, by id, with their current template versions.
    func environments(projectId: String) async throws -> [Environment] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT e.project_id, e.id, e.name, e.create_time, \
                COALESCE((SELECT MAX(v.version_number) FROM template_versions v \
                WHERE v.project_id = e.project_id AND v.environment_id = e.id), 0) AS template_version \
                FROM environments e WHERE e.project_id = \(bind: projectId) ORDER BY e.id
                """
            ).all().map(Self.environment)
        }
    }

    /// One environment: one row by its primary key.
    func environment(projectId: String, id: String) async throws -> Environment? {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT e.project_id, e.id, e.name, e.create_time, \
                COALESCE((SELECT MAX(v.version_number) FROM template_versions v \
                WHERE v.project_id = e.project_id AND v.environment_id = e.id), 0) AS template_version \
                FROM environments e WHERE e.project_id = \(bind: projectId) AND e.id = \(bind: id)
                """
            ).first().map(Self.environment)
        }
    }

    // MARK: Templates

    /// The newest version of an environment's template, or nil before the first publish.
    func latestVersion(projectId: String, environmentId: String) async throws -> StoredVersion? {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT project_id, environment_id, version_number, update_time, template FROM template_versions \
                WHERE project_id = \(bind: projectId) AND environment_id = \(bind: environmentId) \
                ORDER BY version_number DESC LIMIT 1
                """
            ).first().map(Self.storedVersion)
        }
    }

    /// The number of an environment's newest version (0 before the first publish), without
    /// reading the template.
    func currentVersionNumber(projectId: String, environmentId: String) async throws -> Int64 {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT COALESCE(MAX(version_number), 0) AS newest FROM template_versions \
                WHERE project_id = \(bind: projectId) AND environment_id = \(bind: environmentId)
                """
            ).first()?.decode(column: "newest", as: Int64.self) ?? 0
        }
    }

    /// One version of an environment's template.
    func version(projectId: String, environmentId: String, number: Int64) async throws -> StoredVersion? {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT project_id, environment_id, version_number, update_time, template FROM template_versions \
                WHERE project_id = \(bind: projectId) AND environment_id = \(bind: environmentId) AND version_number = \(bind: number)
                """
            ).first().map(Self.storedVersion)
        }
    }

    /// The newest version of every environment that has one, for warming the serving cache.
    func allLatestVersions() async throws -> [StoredVersion] {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT v.project_id, v.environment_id, v.version_number, v.update_time, v.template FROM template_versions v \
                JOIN (SELECT project_id, environment_id, MAX(version_number) AS newest FROM template_versions \
                GROUP BY project_id, environment_id) n \
                ON v.project_id = n.project_id AND v.environment_id = n.environment_id AND v.version_number = n.newest
                """
            ).all().map(Self.storedVersion)
        }
    }

    /// The current version number of every environment that has published, cheap enough to poll.
    func currentVersionNumbers() async throws -> [EnvironmentKey: Int64] {
        try await engine.withSession { database in
            var numbers: [EnvironmentKey: Int64] = [:]
            for row in try await database.raw(
                "SELECT project_id, environment_id, MAX(version_number) AS newest FROM template_versions GROUP BY project_id, environment_id"
            ).all() {
                let key = EnvironmentKey(
                    projectId: try row.decode(column: "project_id", as: String.self),
                    environmentId: try row.decode(column: "environment_id", as: String.self)
                )
                numbers[key] = try row.decode(column: "newest", as: Int64.self)
            }
            return numbers
        }
    }

    /// Version metadata, newest first.
    func versions(
        projectId: String,
        environmentId: String,
        query: VersionQuery
    ) async throws -> Page<TemplateVersion> {
        let pageSize = max(1, min(query.pageSize, 300))
        // Version numbers start at 1; a token below that (the routes refuse it) reads nothing.
        let below = max(query.pageToken.flatMap(Int64.init) ?? Int64.max, 1)
        let newest = min(query.endVersionNumber ?? Int64.max, below == Int64.max ? Int64.max : below - 1)
        let rows = try await engine.withSession { database in
            try await database.raw(
                """
                SELECT version_number, update_time, update_type, update_user, description, rollback_source FROM template_versions \
                WHERE project_id = \(bind: projectId) AND environment_id = \(bind: environmentId) \
                AND version_number <= \(bind: newest) \
                AND update_time >= \(bind: query.startTime ?? Int64.min) AND update_time < \(bind: query.endTime ?? Int64.max) \
                ORDER BY version_number DESC LIMIT \(bind: pageSize + 1)
                """
            ).all()
        }
        var versions: [TemplateVersion] = []
        for row in rows.prefix(pageSize) {
            versions.append(
                TemplateVersion(
                    versionNumber: String(try row.decode(column: "version_number", as: Int64.self)),
                    updateTime: Clock.rfc3339(milliseconds: try row.decode(column: "update_time", as: Int64.self)),
                    updateUser: TemplateUser(name: try row.decode(column: "update_user", as: String.self)),
                    description: try row.decode(column: "description", as: String?.self),
                    updateOrigin: .restAPI,
                    updateType: UpdateType(rawValue: try row.decode(column: "update_type", as: String.self)),
                    rollbackSource: try row.decode(column: "rollback_source", as: Int64?.self).map(String.init)
                )
            )
        }
        let next = rows.count > pageSize ? versions.last?.versionNumber : nil
        return Page(items: versions, nextPageToken: next)
    }

    /// Publishes a new version: one transaction, stored whole or not at all.
    ///
    /// - Parameters:
    ///   - expectedVersion: The version the publisher read (from its ETag); nil forces the publish.
    ///   - rollbackSource: For a rollback, the version copied.
    /// - Throws: ``StorageError/versionConflict(expected:current:)`` when someone published since
    ///   `expectedVersion`; ``StorageError/environmentNotFound(project:environment:)``.
    func publish(
        projectId: String,
        environmentId: String,
        template: ConfigTemplate,
        expectedVersion: Int64?,
        actor: Actor,
        rollbackSource: Int64? = nil
    ) async throws -> StoredVersion {
        try await publishQueue.withLock {
            // A forced publish retries when a publisher on another node takes the number it chose.
            for _ in 0..<20 {
                do {
                    return try await self.publishOnce(
                        projectId: projectId,
                        environmentId: environmentId,
                        template: template,
                        expectedVersion: expectedVersion,
                        actor: actor,
                        rollbackSource: rollbackSource
                    )
                } catch  where StoreErrors.isBusy(error) {
                    // SQLite already waited its busy timeout for the write lock: another process
                    // holds it. That is not a conflict with the publisher's version.
                    throw StorageError.busy
                } catch  where StoreErrors.isUniqueViolation(error) {
                    if let expectedVersion {
                        let current = try await self.currentVersionNumber(
                            projectId: projectId,
                            environmentId: environmentId
                        )
                        throw StorageError.versionConflict(expected: expectedVersion, current: current)
                    }
                }
            }
            throw StorageError.busy
        }
    }

    private func publishOnce(
        projectId: String,
        environmentId: String,
        template: ConfigTemplate,
        expectedVersion: Int64?,
        actor: Actor,
        rollbackSource: Int64?
    ) async throws -> StoredVersion {
        let retained = retainedVersions
        let kind = engine.kind
        return try await engine.transaction { database in
            // The environment must exist. On PostgreSQL the row is also locked: publishers of one
            // environment queue here, on every node, so none has to retry; the primary key still
            // guards the number. SQLite's BEGIN IMMEDIATE already queues.
            let lock = kind == .postgres ? " FOR UPDATE" : ""
            guard
                try await database.raw(
                    "SELECT id FROM environments WHERE project_id = \(bind: projectId) AND id = \(bind: environmentId)\(unsafeRaw: lock)"
                ).first() != nil
            else {
                throw StorageError.environmentNotFound(project: projectId, environment: environmentId)
            }
            let previousRow = try await database.raw(
                """
                SELECT project_id, environment_id, version_number, update_time, template FROM template_versions \
                WHERE project_id = \(bind: projectId) AND environment_id = \(bind: environmentId) \
                ORDER BY version_number DESC LIMIT 1
                """
            ).first()
            let previous = try previousRow.map(Self.storedVersion)
            let current = previous?.number ?? 0
            if let expectedVersion, expectedVersion != current {
                throw StorageError.versionConflict(expected: expectedVersion, current: current)
            }
            let number = current + 1
            let now = Clock.nowMilliseconds()
            let updateType: UpdateType =
                rollbackSource != nil ? .rollback : (expectedVersion == nil ? .forcedUpdate : .incrementalUpdate)
            var stored = template
            stored.version = TemplateVersion(
                versionNumber: String(number),
                updateTime: Clock.rfc3339(milliseconds: now),
                updateUser: TemplateUser(name: actor.name),
                description: template.version?.description,
                updateOrigin: .restAPI,
                updateType: updateType,
                rollbackSource: rollbackSource.map(String.init)
            )
            let text = stored.serialized(.compact)
            try await database.raw(
                """
                INSERT INTO template_versions \
                (project_id, environment_id, version_number, update_time, update_type, update_user, description, rollback_source, template) \
                VALUES (\(bind: projectId), \(bind: environmentId), \(bind: number), \(bind: now), \(bind: updateType.rawValue), \
                \(bind: actor.name), \(bind: template.version?.description), \(bind: rollbackSource), \(bind: text))
                """
            ).run()
            let diff =
                previous.map { TemplateDiff(from: $0.template, to: stored) }
                ?? TemplateDiff(from: ConfigTemplate(), to: stored)
            try await Self.insertAudit(
                database,
                actor: actor,
                action: rollbackSource == nil ? .templatePublish : .templateRollback,
                projectId: projectId,
                environmentId: environmentId,
                summary: rollbackSource.map { "rolled back to version \($0) as version \(number)" }
                    ?? "published version \(number) (\(updateType.rawValue))",
                details: ["versionNumber": .string(String(number)), "changes": diff.json()]
            )
            if kind == .postgres {
                // Delivered to every node's VersionListener when the transaction commits, never before.
                try await database.raw(
                    "SELECT pg_notify(\(bind: VersionChannel.name), \(bind: "\(projectId)/\(environmentId)/\(number)"))"
                ).run()
            }
            if let retained, number > Int64(retained) {
                try await database.raw(
                    """
                    DELETE FROM template_versions WHERE project_id = \(bind: projectId) \
                    AND environment_id = \(bind: environmentId) AND version_number <= \(bind: number - Int64(retained))
                    """
                ).run()
            }
            return StoredVersion(
                projectId: projectId,
                environmentId: environmentId,
                number: number,
                updateTime: now,
                template: stored,
                templateJSON: text
            )
        }
    }

    // MARK: API keys

    /// Stores a new API key: its id and the SHA-256 of its secret, never the secret (the key
    /// index makes both and hands the secret out once).
    func createKey(
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
    func keys() async throws -> [StoredKey] {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT id, name, role, project_id, environment_id, create_time, revoke_time FROM api_keys ORDER BY create_time DESC, id"
            ).all().map(Self.storedKey)
        }
    }

    /// Every key with its SHA-256, for the in-memory key index.
    func keyHashes() async throws -> [(hash: String, key: StoredKey)] {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT id, name, role, project_id, environment_id, create_time, revoke_time, key_hash FROM api_keys"
            ).all().map { row in (try row.decode(column: "key_hash", as: String.self), try Self.storedKey(row)) }
        }
    }

    /// Revokes a key; it authenticates nothing from then on.
    /// - Throws: ``StorageError/keyNotFound(_:)``.
    func revokeKey(id: String, actor: Actor) async throws {
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

    // MARK: Audit log

    /// Audit entries, newest first; scoped to a project and environment when given.
    func audit(
        projectId: String?,
        environmentId: String?,
        filter: AuditFilter = AuditFilter(),
        pageSize: Int,
        pageToken: String?
    ) async throws -> Page<AuditEntry> {
        let size = max(1, min(pageSize, 300))
        let cursor = try pageToken.map(AuditCursor.init(token:)) ?? AuditCursor(sequence: Int64.max, id: "")
        // Two nodes can write the same sequence number in the same millisecond: the id breaks the
        // tie, so paging never skips or repeats an entry.
        var query: SQLQueryString = """
            SELECT id, time, sequence, actor_key_id, actor_user_id, actor_name, action, project_id, environment_id, summary, details \
            FROM audit_log WHERE (sequence < \(bind: cursor.sequence) \
            OR (sequence = \(bind: cursor.sequence) AND id < \(bind: cursor.id)))
            """
        // Filters are added, not written as `? IS NULL OR …`: PostgreSQL cannot type an unbound NULL.
        if let projectId {
            query.appendInterpolation(unsafeRaw: " AND project_id = ")
            query.appendInterpolation(bind: projectId)
        }
        if let environmentId {
            query.appendInterpolation(unsafeRaw: " AND environment_id = ")
            query.appendInterpolation(bind: environmentId)
        }
        if let actor = filter.actor {
            query.appendInterpolation(unsafeRaw: " AND (actor_key_id = ")
            query.appendInterpolation(bind: actor)
            query.appendInterpolation(unsafeRaw: " OR actor_user_id = ")
            query.appendInterpolation(bind: actor)
            query.appendInterpolation(unsafeRaw: " OR LOWER(actor_name) = ")
            query.appendInterpolation(bind: actor.lowercased())
            query.appendInterpolation(unsafeRaw: ")")
        }
        if let action = filter.action {
            query.appendInterpolation(unsafeRaw: " AND action = ")
            query.appendInterpolation(bind: action)
        }
        if let startTime = filter.startTime {
            query.appendInterpolation(unsafeRaw: " AND time >= ")
            query.appendInterpolation(bind: startTime)
        }
        if let endTime = filter.endTime {
            query.appendInterpolation(unsafeRaw: " AND time < ")
            query.appendInterpolation(bind: endTime)
        }
        query.appendInterpolation(unsafeRaw: " ORDER BY sequence DESC, id DESC LIMIT ")
        query.appendInterpolation(bind: size + 1)
        let finalQuery = query
        let rows = try await engine.withSession { database in try await database.raw(finalQuery).all() }
        var entries: [AuditEntry] = []
        var last: AuditCursor?
        for row in rows.prefix(size) {
            last = AuditCursor(
                sequence: try row.decode(column: "sequence", as: Int64.self),
                id: try row.decode(column: "id", as: String.self)
            )
            entries.append(
                AuditEntry(
                    id: try row.decode(column: "id", as: String.self),
                    time: try row.decode(column: "time", as: Int64.self),
                    actor: Actor(
                        keyId: try row.decode(column: "actor_key_id", as: String?.self),
                        userId: try row.decode(column: "actor_user_id", as: String?.self),
                        name: try row.decode(column: "actor_name", as: String.self)
                    ),
                    action: try row.decode(column: "action", as: String.self),
                    projectId: try row.decode(column: "project_id", as: String?.self),
                    environmentId: try row.decode(column: "environment_id", as: String?.self),
                    summary: try row.decode(column: "summary", as: String.self),
                    details: (try? JSONValue.parse(try row.decode(column: "details", as: String.self))) ?? .null
                )
            )
        }
        return Page(items: entries, nextPageToken: rows.count > size ? last?.token : nil)
    }

    static func insertAudit(
        _ database: any SQLDatabase,
        actor: Actor,
        action: AuditAction,
        projectId: String?,
        environmentId: String?,
        summary: String,
        details: JSONValue
    ) async throws {
        let now = Clock.nowMilliseconds()
        try await database.raw(
            """
            INSERT INTO audit_log (id, time, sequence, actor_key_id, actor_user_id, actor_name, action, project_id, environment_id, summary, details) \
            VALUES (\(bind: UUID().uuidString.lowercased()), \(bind: now), \(bind: AuditSequence.next(now: now)), \(bind: actor.keyId), \
            \(bind: actor.userId), \(bind: actor.name), \(bind: action.rawValue), \(bind: projectId), \(bind: environmentId), \(bind: summary), \
            \(bind: details.serialized(.compact)))
            """
        ).run()
    }

    // MARK: Row decoding

    static func project(_ row: any SQLRow) throws -> Project {
        Project(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createTime: try row.decode(column: "create_time", as: Int64.self)
        )
    }

    static func environment(_ row: any SQLRow) throws -> Environment {
        Environment(
            projectId: try row.decode(column: "project_id", as: String.self),
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createTime: try row.decode(column: "create_time", as: Int64.self),
            templateVersion: try row.decode(column: "template_version", as: Int64.self)
        )
    }

    static func storedVersion(_ row: any SQLRow) throws -> StoredVersion {
        let text = try row.decode(column: "template", as: String.self)
        return StoredVersion(
            projectId: try row.decode(column: "project_id", as: String.self),
            environmentId: try row.decode(column: "environment_id", as: String.self),
            number: try row.decode(column: "version_number", as: Int64.self),
            updateTime: try row.decode(column: "update_time", as: Int64.self),
            template: try ConfigTemplate(data: Array(text.utf8)),
            templateJSON: text
        )
    }

    static func storedKey(_ row: any SQLRow) throws -> StoredKey {
        let roleName = try row.decode(column: "role", as: String.self)
        return StoredKey(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            role: KeyRole(rawValue: roleName) ?? .client,
            projectId: try row.decode(column: "project_id", as: String?.self),
            environmentId: try row.decode(column: "environment_id", as: String?.self),
            createTime: try row.decode(column: "create_time", as: Int64.self),
            revokeTime: try row.decode(column: "revoke_time", as: Int64?.self)
        )
    }
}
