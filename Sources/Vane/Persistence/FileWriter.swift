import Foundation

/// The writes of the clients of one storage directory, off the callers' threads: one serial queue
/// per directory in the process keeps them in order, and a client opened later on the same
/// directory waits for them before it reads (``waitForWrites()``).
///
/// A file scheduled again before its write ran is written once, with the newest contents: the
/// contents are made when the write runs.
final class FileWriter: Sendable {
    private static let queues = LockedValue<[String: DispatchQueue]>([:])

    private let queue: DispatchQueue
    /// Files with a write scheduled and not yet started.
    private let pending = LockedValue<Set<String>>([])

    init(directory: URL) {
        let key = directory.standardizedFileURL.path
        queue = Self.queues.withLockedValue { queues in
            if let queue = queues[key] { return queue }
            let queue = DispatchQueue(label: "vane.files", qos: .utility)
            queues[key] = queue
            return queue
        }
    }

    /// Runs `write` on the directory's queue, unless a write of `file` is waiting already.
    func schedule(_ file: URL, _ write: @escaping @Sendable () -> Void) {
        let isNew = pending.withLockedValue { $0.insert(file.path).inserted }
        guard isNew else { return }
        queue.async {
            self.pending.withLockedValue { _ = $0.remove(file.path) }
            write()
        }
    }

    /// Runs `work` on the directory's queue, after every write scheduled before.
    func enqueue(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Returns once every write scheduled so far is on disk (or failed and was logged).
    func waitForWrites() {
        queue.sync {}
    }
}
