import Foundation

/// Work the system should let finish before it suspends the app: flushing events as the app goes
/// to the background.
///
/// On Apple platforms it runs inside `ProcessInfo.performExpiringActivity(withReason:using:)`
/// (iOS 8.2, macOS 10.10, tvOS 9, watchOS 2, visionOS 1), which apps and app extensions alike may
/// call, unlike `UIApplication.beginBackgroundTask`, which extensions cannot, and which watchOS
/// does not have. https://developer.apple.com/documentation/foundation/processinfo/performexpiringactivity(withreason:using:)
struct ExpiringActivity: Sendable {
    /// Calls its block with `false` on a background thread and keeps the process running until
    /// that call returns; calls it again with `true`, on another thread, when the time is up.
    var perform: @Sendable (_ reason: String, _ block: @escaping @Sendable (_ expired: Bool) -> Void) -> Void

    /// The system's: `performExpiringActivity` on Apple platforms; elsewhere no process is
    /// suspended, so the block runs on a background thread and never expires.
    static let system = ExpiringActivity { reason, block in
        #if canImport(Darwin)
        ProcessInfo.processInfo.performExpiringActivity(withReason: reason, using: block)
        #else
        DispatchQueue.global(qos: .utility).async { block(false) }
        #endif
    }

    /// Runs `work` inside the activity. When the time is up before `work` ends, the activity ends
    /// at once (the system suspends the app soon after) and `work` goes on when the app resumes.
    /// - Returns: A task that ends with the activity.
    @discardableResult
    func run(reason: String, _ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        let ended = DispatchSemaphore(value: 0)
        let started = LockedValue(false)
        let (activityEnded, finish) = AsyncStream<Void>.makeStream()
        perform(reason) { expired in
            if expired {
                // The system calls with `true` at once when it grants no time at all: the work
                // runs all the same, unprotected. Otherwise the time is up: end the activity.
                let refused = started.withLockedValue { started in
                    defer { started = true }
                    return !started
                }
                if refused {
                    Task { await work() }
                    finish.finish()
                }
                ended.signal()
                return
            }
            started.withLockedValue { $0 = true }
            Task {
                await work()
                ended.signal()
            }
            // The activity lasts while this block runs: until the work or the time ends.
            ended.wait()
            finish.finish()
        }
        return Task {
            for await _ in activityEnded {}
        }
    }
}
