import Foundation
import Logging
package import SQLKit
package import VaneCore

// The audit log: read with filters, and written by every change in that change's own transaction.
extension ConfigStore {
    /// Audit entries, newest first; scoped to a project and environment when given.
    package func audit(
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
        if let flag = filter.flag {
            query.appendInterpolation(unsafeRaw: " AND id IN (SELECT audit_id FROM audit_log_flags WHERE flag_key = ")
            query.appendInterpolation(bind: flag)
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

    /// Writes one entry; `flags` are the flag keys it changed, which the log filters by (also
    /// kept in its details as `flags`).
    package static func insertAudit(
        _ database: any SQLDatabase,
        actor: Actor,
        action: AuditAction,
        projectId: String?,
        environmentId: String?,
        summary: String,
        details: JSONValue,
        flags: [String] = []
    ) async throws {
        let now = Clock.nowMilliseconds()
        let id = UUID().uuidString.lowercased()
        let keys = Array(Set(flags)).sorted()
        var details = details
        if !keys.isEmpty, case .object(var object) = details {
            object["flags"] = .array(keys.map(JSONValue.string))
            details = .object(object)
        }
        try await database.raw(
            """
            INSERT INTO audit_log (id, time, sequence, actor_key_id, actor_user_id, actor_name, action, project_id, environment_id, summary, details) \
            VALUES (\(bind: id), \(bind: now), \(bind: AuditSequence.next(now: now)), \(bind: actor.keyId), \
            \(bind: actor.userId), \(bind: actor.name), \(bind: action.rawValue), \(bind: projectId), \(bind: environmentId), \(bind: summary), \
            \(bind: details.serialized(.compact)))
            """
        ).run()
        for key in keys {
            try await database.raw(
                "INSERT INTO audit_log_flags (flag_key, audit_id) VALUES (\(bind: key), \(bind: id))"
            ).run()
        }
    }
}
