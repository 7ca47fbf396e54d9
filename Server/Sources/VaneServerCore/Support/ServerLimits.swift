/// Request size limits.
package enum ServerLimits {
    /// A template body: well above Firebase's 1,000,000 value characters plus structure.
    package static let maximumTemplateBytes = 8 << 20
    /// A fetch or OFREP body: a context is small.
    package static let maximumContextBytes = 64 << 10
    /// Any other admin body (project, key, rollback).
    package static let maximumSmallBodyBytes = 64 << 10
    /// A batch of experiment events: 1,000 events with properties fit.
    package static let maximumEventBatchBytes = 1 << 20
}
