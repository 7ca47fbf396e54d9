import NIOConcurrencyHelpers

/// A thread-safe counter.
package final class LockedCounter: Sendable {
    private let value = NIOLockedValueBox<UInt64>(0)

    package func next() -> UInt64 {
        value.withLockedValue { value in
            value &+= 1
            return value
        }
    }
}
