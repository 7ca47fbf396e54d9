import Foundation

/// Which database engines a test run covers.
///
/// PostgreSQL is on unless `VANE_TEST_SQLITE_ONLY=1` (`scripts/test --quick` sets it): then the
/// PostgreSQL cases of parametrised tests are left out and PostgreSQL-only tests are skipped, each
/// reported as skipped with ``sqliteOnlyReason``, never as passed. Without that variable a
/// PostgreSQL test fails when `VANE_TEST_POSTGRES_URL` is missing, so CI cannot pass without it.
package enum TestEngines {
    /// Whether this run tests PostgreSQL.
    package static let postgreSQLIsOn = ProcessInfo.processInfo.environment["VANE_TEST_SQLITE_ONLY"] != "1"

    /// Why a PostgreSQL test did not run.
    package static let sqliteOnlyReason =
        "PostgreSQL is off in this run (VANE_TEST_SQLITE_ONLY=1, scripts/test --quick); scripts/test runs it"
}
