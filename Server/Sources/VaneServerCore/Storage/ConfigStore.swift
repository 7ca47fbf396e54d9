import Foundation
import Logging
import SQLKit
import VaneCore

/// Vane's data: projects, environments, their immutable template history, API keys and the audit
/// log — one implementation over SQLite and PostgreSQL.
///
/// A publish is one transaction: the version row, the audit entry and any pruning commit together
/// or not at all. The primary key (project, environment, version number) is the concurrency
/// control: two publishers racing for the same number cannot both win, on either engine.
///
/// One type with an extension per concern — `ConfigStore+Projects`, `+Versions`, `+Keys`,
/// `+Audit`, `+Rows` — rather than a store per concern: every change writes its audit entry in
/// its own transaction (``insertAudit(_:actor:action:projectId:environmentId:summary:details:)``),
/// and publishes share one ``publishQueue``.
package final class ConfigStore: Sendable {
    /// The database.
    package let engine: DatabaseEngine
    /// How many versions to keep per environment; nil keeps every version.
    package let retainedVersions: Int?
    /// Publishes on this node queue here before they take a database connection. On PostgreSQL
    /// a publisher waits for the environment's row lock while holding a pooled connection, so
    /// twenty concurrent publishes would otherwise hold the whole pool and starve every other
    /// query (fetches' key refreshes, the poller) until the pool's request timeout fails them.
    let publishQueue = AsyncLock()

    /// Opens the store and brings its schema up to date.
    package init(engine: DatabaseEngine, retainedVersions: Int? = nil) async throws {
        self.engine = engine
        self.retainedVersions = retainedVersions
        // Another process migrating the same SQLite file can hold its write lock past the busy
        // timeout (a slow disk, a loaded machine); the migration checks inside its transaction
        // what is still needed, so trying again is safe, for as long as a start may take.
        let deadline = ContinuousClock.now + Self.migrationPatience
        while true {
            do {
                try await Migrations.run(on: engine)
                return
            } catch  where StoreErrors.isBusy(error) && ContinuousClock.now < deadline {
                continue
            }
        }
    }

    /// How long opening a store keeps trying to migrate while SQLite reports the file busy
    /// (each try first waits the busy timeout); then the busy error is the start's failure.
    package static let migrationPatience: Duration = .seconds(60)
}
