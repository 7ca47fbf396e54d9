package import SQLKit
import Synchronization

/// An environment as the experiment event tables key it: by a number of its own, which every row
/// and index entry of `experiment_events` and `experiment_units` holds in place of the project's
/// and the environment's ids (migrations 18 and 19).
///
/// The number is given in `event_environments` when the environment first stores an event, and
/// is never changed or given to another environment: a number read once stays right for the life
/// of the database.
package struct EventEnvironment: Sendable, Hashable {
    package var key: EnvironmentKey
    package var number: Int64

    /// The SQL condition that holds for the event tables' rows of `key`: one lookup of its
    /// number per statement, and none of its rows when it has none yet.
    package static func rows(of key: EnvironmentKey) -> SQLQueryString {
        """
        environment_number = (SELECT number FROM event_environments \
        WHERE project_id = \(bind: key.projectId) AND environment_id = \(bind: key.environmentId))
        """
    }

    /// The numbers this process has read, so that storing events looks each one up once.
    package final class Numbers: Sendable {
        private let known = Mutex<[EnvironmentKey: Int64]>([:])

        package init() {}

        /// `key` with its number, given now when it has none. The number is committed before it
        /// is returned (in a statement of its own, outside the caller's transaction), so a
        /// transaction that later rolls back cannot leave a number here that the database does
        /// not hold.
        package func environment(_ key: EnvironmentKey, engine: DatabaseEngine) async throws -> EventEnvironment {
            if let number = known.withLock({ $0[key] }) { return EventEnvironment(key: key, number: number) }
            let number = try await engine.withSession { database in
                // Nodes sharing a database may give it at once: the second changes nothing and
                // reads the first's number. (The update makes the statement return the row.)
                let row = try await database.raw(
                    """
                    INSERT INTO event_environments (project_id, environment_id) \
                    VALUES (\(bind: key.projectId), \(bind: key.environmentId)) \
                    ON CONFLICT (project_id, environment_id) DO UPDATE SET project_id = excluded.project_id \
                    RETURNING number
                    """
                ).first()
                guard let row else {
                    throw StorageError.environmentNotFound(project: key.projectId, environment: key.environmentId)
                }
                return try row.decode(column: "number", as: Int64.self)
            }
            known.withLock { $0[key] = number }
            return EventEnvironment(key: key, number: number)
        }
    }
}
