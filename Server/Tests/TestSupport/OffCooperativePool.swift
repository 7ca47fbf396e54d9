import Foundation

/// Runs blocking work — waiting for a process, polling its output — on a thread of its own.
///
/// Swift's cooperative pool has one thread per core: two on the CI machines. A test that blocks
/// one of them while a `vane` process runs halves every other test's progress, and two such tests
/// stall the whole run (database pool requests and one-second SDK timeouts then fail spuriously).
package func offCooperativePool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
