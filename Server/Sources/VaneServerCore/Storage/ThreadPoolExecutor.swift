import NIOPosix

/// Runs a task's code on the thread of a one-thread `NIOThreadPool`: the thread SQLiteNIO runs
/// the connection's statements on.
///
/// A database session's task prefers this executor (``DatabaseEngine/withSession(_:)``), so each
/// statement and the Swift code after it run back to back on one thread: the statement's result
/// needs no other thread to wake, and no queue behind the requests' work on the cooperative pool.
/// The session lock already lets one session at a time use the connection, so nothing that could
/// run beside it waits.
final class ThreadPoolExecutor: TaskExecutor {
    private let pool: NIOThreadPool

    init(_ pool: NIOThreadPool) {
        self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pool.submit { state in
            switch state {
            case .active:
                job.runSynchronously(on: self.asUnownedTaskExecutor())
            case .cancelled:
                // The pool has stopped (the database closed): the job still has to run.
                globalConcurrentExecutor.enqueue(ExecutorJob(job))
            }
        }
    }
}
