package import SQLKit
import VaneCore

/// Which template versions fetch has served, per environment, for the results' health check
/// "exposures without any fetch of that version": an exposure naming a version no client ever
/// received from this server comes from an app that talks to another server or environment, or
/// sends made-up events.
///
/// Each node records a version once, on the first fetch it answers with it (`served_versions`,
/// migration 7), before that fetch's response leaves: an app cannot send an exposure of a
/// version before the version is recorded.
package struct ServedVersionLog: Sendable {
    package let engine: DatabaseEngine

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// Records that fetch served `version` in `environment` (nothing when it is recorded).
    package func record(_ version: Int64, in environment: EnvironmentKey) async throws {
        try await engine.withSession { database in
            try await database.raw(
                """
                INSERT INTO served_versions (project_id, environment_id, version_number, first_served_time) \
                VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \(bind: version), \
                \(bind: Clock.nowMilliseconds())) ON CONFLICT DO NOTHING
                """
            ).run()
        }
    }

    /// Of `versions`, those fetch never served in `environment`.
    package static func unserved(
        _ versions: Set<Int64>,
        in environment: EnvironmentKey,
        database: any SQLDatabase
    ) async throws -> Set<Int64> {
        guard !versions.isEmpty else { return [] }
        let served = try await database.raw(
            """
            SELECT version_number FROM served_versions WHERE project_id = \(bind: environment.projectId) \
            AND environment_id = \(bind: environment.environmentId) AND version_number IN (\(binds: versions.sorted()))
            """
        ).all().map { try $0.decode(column: "version_number", as: Int64.self) }
        return versions.subtracting(served)
    }
}
