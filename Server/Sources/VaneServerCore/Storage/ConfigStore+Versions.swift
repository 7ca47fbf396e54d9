import Foundation
import Logging
import SQLKit
import VaneAuthoring
package import VaneCore

// Template versions: immutable rows per environment, read by number or newest first, and the publish transaction that adds one.
extension ConfigStore {
    /// The newest version of an environment's template, or nil before the first publish.
    package func latestVersion(projectId: String, environmentId: String) async throws -> StoredVersion? {
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
    package func currentVersionNumber(projectId: String, environmentId: String) async throws -> Int64 {
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
    package func version(projectId: String, environmentId: String, number: Int64) async throws -> StoredVersion? {
        try await engine.withSession { database in
            try await database.raw(
                """
                SELECT project_id, environment_id, version_number, update_time, template FROM template_versions \
                WHERE project_id = \(bind: projectId) AND environment_id = \(bind: environmentId) AND version_number = \(bind: number)
                """
            ).first().map(Self.storedVersion)
        }
    }

    /// The template of one version; version 0 is the empty template.
    /// - Throws: ``StorageError/versionNotFound(_:)`` when the environment has no such version.
    package func template(_ environment: EnvironmentKey, number: Int64) async throws -> ConfigTemplate {
        if number == 0 { return ConfigTemplate() }
        guard
            let stored = try await version(
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                number: number
            )
        else { throw StorageError.versionNotFound(number) }
        return stored.template
    }

    /// The newest version of every environment that has one, for warming the serving cache.
    package func allLatestVersions() async throws -> [StoredVersion] {
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
    package func currentVersionNumbers() async throws -> [EnvironmentKey: Int64] {
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
    package func versions(
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
    ///   - rollbackNote: For a rollback, its reason and the one flag it restores, if only one.
    ///   - authorization: What allows the change under the environment's change policy, checked
    ///     in the transaction (``ChangeRequestStore/authorize(_:_:in:kind:actor:liveVersion:publishes:)``).
    ///   - change: What webhooks are told, when it is more than a publish or a rollback (a kill
    ///     switch); the message is written in the same transaction.
    /// - Throws: ``StorageError/versionConflict(expected:current:)`` when someone published since
    ///   `expectedVersion`; ``StorageError/environmentNotFound(project:environment:)``;
    ///   ``ChangeRefusal`` when the policy refuses it.
    package func publish(
        projectId: String,
        environmentId: String,
        template: ConfigTemplate,
        expectedVersion: Int64?,
        actor: Actor,
        rollbackSource: Int64? = nil,
        rollbackNote: RollbackNote? = nil,
        authorization: ChangeAuthorization = .direct("the publish"),
        change: WebhookChange? = nil,
        alongside: PublishAlongside? = nil,
        kind changeKind: String? = nil
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
                        rollbackSource: rollbackSource,
                        rollbackNote: rollbackNote,
                        authorization: authorization,
                        change: change,
                        alongside: alongside,
                        kind: changeKind
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
        rollbackSource: Int64?,
        rollbackNote: RollbackNote?,
        authorization: ChangeAuthorization,
        change: WebhookChange?,
        alongside: PublishAlongside?,
        kind changeKind: String?
    ) async throws -> StoredVersion {
        let retained = retainedVersions
        let kind = engine.kind
        return try await engine.transaction { database in
            // The environment must exist. On PostgreSQL the row is also locked: publishers of one
            // environment queue here, on every node, so none has to retry; the primary key still
            // guards the number. SQLite's BEGIN IMMEDIATE already queues.
            try await Self.lockEnvironment(
                database,
                EnvironmentKey(projectId: projectId, environmentId: environmentId),
                kind: kind
            )
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
            // The change policy, read after the environment's lock: a policy switched on before
            // this transaction holds, one switched on after waits for it.
            try await ChangeRequestStore.authorize(
                database,
                authorization,
                in: EnvironmentKey(projectId: projectId, environmentId: environmentId),
                kind: changeKind ?? (rollbackSource == nil ? "template" : "rollback"),
                actor: actor,
                liveVersion: current,
                publishes: true,
                engine: kind
            )
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
            var details: JSONObject = [
                "versionNumber": .string(String(number)), "changes": diff.json(),
                "message": .string(template.version?.description ?? ""),
                "kind": .string(
                    AuditKind.ofPublish(rollbackSource: rollbackSource, authorization: authorization, change: change)
                        .rawValue
                ),
            ]
            var summary = "published version \(number) (\(updateType.rawValue))"
            if let rollbackSource {
                let what = rollbackNote?.flag.map { "\($0) " } ?? ""
                summary = "rolled back \(what)to version \(rollbackSource) as version \(number)"
                if let reason = rollbackNote?.reason {
                    summary += ": \(reason)"
                    details["reason"] = .string(reason)
                }
                if let flag = rollbackNote?.flag { details["flag"] = .string(flag) }
            }
            try await Self.insertAudit(
                database,
                actor: actor,
                action: rollbackSource == nil ? .templatePublish : .templateRollback,
                projectId: projectId,
                environmentId: environmentId,
                summary: summary,
                details: .object(details),
                flags: diff.addedParameters + diff.removedParameters + diff.changedParameters
            )
            // What must commit with this version or not at all (a rollout's step and its claim).
            try await alongside?(database, number)
            try await WebhookStore.enqueue(
                database,
                kind: kind,
                change: change ?? .published(rollbackSource: rollbackSource),
                projectId: projectId,
                environmentId: environmentId,
                version: number,
                actor: actor
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

    // MARK: - Inside a transaction, for every store that writes to an environment

    /// Checks that the environment exists and, on PostgreSQL, locks its row until the
    /// transaction ends: every write that changes what an environment's clients get (publish,
    /// experiment start and stop, change requests and their policy) queues here, on every node.
    /// SQLite's `BEGIN IMMEDIATE` already queues writers.
    /// - Throws: ``StorageError/environmentNotFound(project:environment:)``.
    static func lockEnvironment(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        kind: DatabaseEngine.Kind
    ) async throws {
        let lock = kind == .postgres ? " FOR UPDATE" : ""
        guard
            try await database.raw(
                """
                SELECT id FROM environments WHERE project_id = \(bind: environment.projectId) \
                AND id = \(bind: environment.environmentId)\(unsafeRaw: lock)
                """
            ).first() != nil
        else {
            throw StorageError.environmentNotFound(
                project: environment.projectId,
                environment: environment.environmentId
            )
        }
    }

    /// The environment's newest template version (0 before the first publish), read inside the
    /// caller's transaction.
    static func currentVersion(_ database: any SQLDatabase, _ environment: EnvironmentKey) async throws -> Int64 {
        try await database.raw(
            """
            SELECT COALESCE(MAX(version_number), 0) AS newest FROM template_versions \
            WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId)
            """
        ).first()?.decode(column: "newest", as: Int64.self) ?? 0
    }
}
