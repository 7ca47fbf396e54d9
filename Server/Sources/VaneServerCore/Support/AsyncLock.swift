/// A first-come, first-served lock for async code.
package actor AsyncLock {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    package func withLock<R: Sendable>(_ work: @Sendable () async throws -> R) async throws -> R {
        await acquire()
        defer { release() }
        return try await work()
    }

    private func acquire() async {
        if !locked {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty {
            locked = false
        } else {
            // Hand the lock straight to the next waiter.
            waiters.removeFirst().resume()
        }
    }
}
