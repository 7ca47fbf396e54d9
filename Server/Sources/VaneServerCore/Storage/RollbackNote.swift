/// What a rollback records beyond the version it copies: why, and for a one-flag rollback which
/// flag. Both go into the audit entry's details (`reason`, `flag`) and its summary.
package struct RollbackNote: Sendable, Equatable {
    /// Why the person rolled back, as they wrote it.
    package var reason: String?
    /// The one flag restored, or nil for the whole template.
    package var flag: String?

    package init(reason: String?, flag: String? = nil) {
        self.reason = reason
        self.flag = flag
    }
}
