import Foundation
package import Logging
import NIOCore
import NIOPosix
import PostgresKit
package import SQLKit
import SQLiteKit

/// An open database, SQLite or PostgreSQL, behind one SQLKit interface.
///
/// Every unit of work runs in ``withSession(_:)``, which gives it a connection of its own for its
/// whole duration, so a transaction's statements never interleave with another task's.
package final class DatabaseEngine: Sendable {
    /// Which engine this is.
    package enum Kind: String, Sendable {
        /// Embedded SQLite.
        case sqlite
        /// PostgreSQL.
        case postgres
    }

    /// The engine.
    package let kind: Kind
    private let database: any SQLDatabase
    /// SQLite's one connection, shared: the lock that gives a session sole use of it, and the
    /// connection's thread, where a session's code runs. Nil for PostgreSQL's pool.
    private let sharedConnection: (lock: AsyncLock, thread: ThreadPoolExecutor)?
    private let close: @Sendable () async throws -> Void

    private init(
        kind: Kind,
        database: any SQLDatabase,
        sharedConnection: (lock: AsyncLock, thread: ThreadPoolExecutor)?,
        close: @escaping @Sendable () async throws -> Void
    ) {
        self.kind = kind
        self.database = database
        self.sharedConnection = sharedConnection
        self.close = close
    }

    /// How long an SQLite statement waits for another process's write lock unless configured.
    package static let defaultSQLiteBusyTimeoutSeconds: Double = 5

    /// Opens a database, creating the SQLite file and its directory if missing.
    ///
    /// - Parameter sqliteBusyTimeoutSeconds: How long an SQLite statement waits for another
    ///   process's write lock before it fails as busy; PostgreSQL ignores it.
    /// - Throws: ``StorageError/cannotOpen(_:_:)`` with what to check.
    package static func open(
        _ location: DatabaseLocation,
        sqliteBusyTimeoutSeconds: Double = defaultSQLiteBusyTimeoutSeconds,
        logger: Logger
    ) async throws -> DatabaseEngine {
        switch location {
        case .sqlite(let path):
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try PrivateFiles.createDirectory(directory)
                try PrivateFiles.createEmptyFile(path)
                try PrivateFiles.restrict([path, path + "-wal", path + "-shm"])
                // A thread of its own for the one connection, rather than NIO's shared pool: the
                // statements of a transaction then run on one warm core instead of alternating
                // between the pool's threads (about 7 % more events ingested; docs/PERFORMANCE.md).
                let thread = NIOThreadPool(numberOfThreads: 1)
                thread.start()
                let connection: SQLiteConnection
                do {
                    connection = try await SQLiteConnection.open(
                        storage: .file(path: path),
                        threadPool: thread,
                        logger: logger,
                        on: MultiThreadedEventLoopGroup.singleton.any()
                    )
                } catch {
                    try? await thread.shutdownGracefully()
                    throw error
                }
                let database = connection.sql(queryLogLevel: nil)
                // The timeout comes first: it waits out a second process, also while this one
                // switches to WAL (which needs the file to itself). WAL keeps readers and the writer
                // apart; FULL syncs every commit, so an acknowledged publish survives a crash.
                do {
                    for pragma in [
                        "PRAGMA busy_timeout = \(Int((sqliteBusyTimeoutSeconds * 1000).rounded()))",
                        "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL",
                        // Statement journals (a multi-row INSERT … ON CONFLICT in a transaction
                        // keeps one) in memory instead of a temporary file: a tenth of the
                        // database thread's time when ingesting events.
                        "PRAGMA foreign_keys = ON", "PRAGMA temp_store = MEMORY",
                        // A 32 MB page cache (SQLite's default is 2 MB), and a checkpoint when the
                        // WAL holds 8,000 pages (32 MB) rather than 1,000: storing events touches
                        // the same index pages in every transaction, and each checkpoint copied
                        // them to the database file again (checkpoints took 12 % of the thread,
                        // reading back evicted pages 9 %). Each commit still syncs.
                        "PRAGMA cache_size = -32768", "PRAGMA wal_autocheckpoint = 8000",
                    ] {
                        try await database.raw(SQLQueryString(pragma)).run()
                    }
                } catch {
                    // An opened connection is closed on every way out (SQLiteNIO asserts otherwise).
                    try? await closeUncancelled(connection, thread: thread)
                    throw error
                }
                return DatabaseEngine(
                    kind: .sqlite,
                    database: database,
                    sharedConnection: (AsyncLock(), ThreadPoolExecutor(thread))
                ) {
                    try await closeUncancelled(connection, thread: thread)
                }
            } catch {
                throw StorageError.cannotOpen(location.description, "\(error)")
            }
        case .postgres(let url):
            let configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw StorageError.cannotOpen(
                    location.description,
                    "the URL is not postgres://user[:password]@host[:port]/database"
                )
            }
            let pool = EventLoopGroupConnectionPool(
                source: PostgresConnectionSource(sqlConfiguration: configuration),
                maxConnectionsPerEventLoop: 4,
                requestTimeout: .seconds(10),
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton
            )
            let database = pool.database(logger: logger).sql(queryLogLevel: nil)
            do {
                try await database.raw("SELECT 1").run()
            } catch {
                try? await pool.shutdownAsync()
                throw StorageError.cannotOpen(location.description, String(reflecting: error))
            }
            let shutdown = PoolShutdown(pool: pool)
            return DatabaseEngine(kind: .postgres, database: database, sharedConnection: nil) {
                try await shutdown.pool.shutdownAsync()
            }
        }
    }

    /// Closes an SQLite connection, then stops its thread, in a task of its own, which is never
    /// cancelled: SQLiteNIO's thread pool drops work that a cancelled task submits, so a close
    /// asked for by a cancelled open or shutdown would leave the connection open, and SQLiteNIO
    /// asserts when it deinitialises.
    private static func closeUncancelled(_ connection: SQLiteConnection, thread: NIOThreadPool) async throws {
        try await Task {
            do {
                try await connection.close()
            } catch {
                try? await thread.shutdownGracefully()
                throw error
            }
            try await thread.shutdownGracefully()
        }.value
    }

    /// Runs `work` with a database session of its own.
    package func withSession<R: Sendable>(
        _ work: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        if let (lock, thread) = sharedConnection {
            // One SQLite connection, shared: the lock gives each unit of work sole use of it, and
            // the work runs on the connection's thread between its statements.
            return try await withTaskExecutorPreference(thread) {
                try await lock.withLock { try await work(self.database) }
            }
        }
        return try await database.withSession(work)
    }

    /// Runs `work` in a transaction: committed if it returns, rolled back if it throws.
    package func transaction<R: Sendable>(
        _ work: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        let begin: SQLQueryString = kind == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await withSession { database in
            try await database.raw(begin).run()
            do {
                let result = try await work(database)
                try await database.raw("COMMIT").run()
                return result
            } catch {
                try? await database.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Closes the database.
    package func shutdown() async throws {
        try await close()
    }
}

/// AsyncKit's pool predates `Sendable`; it guards its state with locks and is made to be shared
/// across event loops.
private struct PoolShutdown: @unchecked Sendable {
    package let pool: EventLoopGroupConnectionPool<PostgresConnectionSource>
}
