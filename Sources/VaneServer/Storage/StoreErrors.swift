import PostgresKit
import SQLiteKit

/// Recognises database errors that mean "someone else got there first".
enum StoreErrors {
    /// A unique or primary-key constraint rejected a row: a concurrent insert won.
    static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == PostgresError.Code.uniqueViolation.raw {
            return true
        }
        if let error = error as? SQLiteError {
            switch error.reason {
            case .constraint, .constraintUniqueFailed, .constraintPrimaryKeyFailed: return true
            default: return false
            }
        }
        return false
    }

    /// SQLite could not get the write lock in time (another process holds it).
    static func isBusy(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        switch error.reason {
        case .busy, .locked: return true
        default: return false
        }
    }
}

/// Orders audit entries: milliseconds times 1,000 plus a counter, so entries in one millisecond
/// keep their order.
enum AuditSequence {
    private static let counter = LockedCounter()

    static func next(now: Int64) -> Int64 {
        now * 1000 + Int64(counter.next() % 1000)
    }
}
