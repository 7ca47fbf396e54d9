#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// A value that several threads share, guarded by a mutex.
///
/// The SDK needs one lock type on iOS 15+, macOS 12+ and Linux. `Synchronization.Mutex` only
/// exists from iOS 18 and macOS 15 on, so this wraps a heap-allocated `pthread_mutex_t` (its
/// address must never move), which every one of those systems has.
///
/// The value lives behind a pointer too, not in a stored property: `inout` access to a class's
/// stored property is checked for exclusivity at run time (`swift_beginAccess`, a thread-local
/// lookup), which cost about a tenth of an SDK read; the mutex already makes access exclusive.
package final class LockedValue<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    /// Creates the box holding `value`.
    package init(_ value: Value) {
        self.value = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // An error here means the system is out of resources; a default mutex cannot fail otherwise.
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock; keep `body` short and never re-enter.
    package func withLockedValue<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

extension LockedValue where Value == Void {
    /// A plain lock: creates a box that guards no value, only a region of code.
    package convenience init() { self.init(()) }

    /// Runs `body` while holding the lock.
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try withLockedValue { (_: inout Void) throws(Failure) -> Result in try body() }
    }
}
