import Foundation

/// The body's result, or a failure once `seconds` pass (the body is then cancelled).
package func withDeadline<T: Sendable>(
    seconds: TimeInterval,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw DeadlineExceeded(seconds: seconds)
        }
        return value
    }
}

package struct DeadlineExceeded: Error, CustomStringConvertible {
    package var seconds: TimeInterval
    package var description: String { "nothing arrived within \(seconds) s" }
}
