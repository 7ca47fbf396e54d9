import PostgresKit
import SQLiteKit

/// Recognises database errors that mean "someone else got there first".
package enum StoreErrors {
    /// A unique or primary-key constraint rejected a row: a concurrent insert won.
    package static func isUniqueViolation(_ error: any Error) -> Bool {
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
    package static func isBusy(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        switch error.reason {
        case .busy, .locked: return true
        default: return false
        }
    }
}

/// Orders audit entries: milliseconds times 1,000 plus a counter, so entries in one millisecond
/// keep their order.
package enum AuditSequence {
    private static let counter = LockedCounter()

    package static func next(now: Int64) -> Int64 {
        now * 1000 + Int64(counter.next() % 1000)
    }
}

/// Where an audit page ends: the last entry's sequence number and id, as `"<sequence>_<id>"`.
package struct AuditCursor: Sendable, Hashable {
    package var sequence: Int64
    package var id: String

    package init(sequence: Int64, id: String) {
        self.sequence = sequence
        self.id = id
    }

    /// Reads a page token; a bare sequence number (the earlier format) still works.
    /// - Throws: ``StorageError/invalidPageToken(_:)``.
    package init(token: String) throws(StorageError) {
        let parts = token.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let sequence = Int64(first) else { throw .invalidPageToken(token) }
        self.init(sequence: sequence, id: parts.count > 1 ? String(parts[1]) : "")
    }

    package var token: String { "\(sequence)_\(id)" }
}
