/// How an ``EventIngestor`` writer forms its groups: when it waits for more batches before it
/// starts one, and how many events one holds.
///
/// A group's commit waits for the disk (`synchronous = FULL`), so the batches that arrive during
/// it wait for the next commit. Under steady load that made groups alternate: the writer started
/// as soon as the first answered client sent again, with that one batch, and the others, a moment
/// behind, queued for a whole commit — two commits for what one could hold. So a writer that finds
/// fewer requests queued than its last group held waits for them, at most half as long as that
/// group's transaction took (and at most ``maximumWait``): less than the commit the latecomers
/// would otherwise wait for. A lone client's group held one request, so it never waits.
///
/// When the commit is quick, a group holds about half the events in flight instead of all of them
/// (``limit(inFlight:)``).
package struct GroupGathering: Sendable, Equatable {
    /// Requests the last group held.
    package private(set) var lastRequests: Int
    /// Events the last group held.
    package private(set) var lastEvents: Int
    /// How long the last group's transaction took, its commit included.
    package private(set) var lastTook: Duration
    /// How long the last group's commit took.
    package private(set) var lastCommit: Duration
    /// The longest a writer waits, however slow the last transaction.
    package var maximumWait: Duration

    /// Nothing written yet: the first group starts at once.
    package init(
        lastRequests: Int = 0,
        lastEvents: Int = 0,
        lastTook: Duration = .zero,
        lastCommit: Duration = .zero,
        maximumWait: Duration = .milliseconds(5)
    ) {
        self.lastRequests = lastRequests
        self.lastEvents = lastEvents
        self.lastTook = lastTook
        self.lastCommit = lastCommit
        self.maximumWait = maximumWait
    }

    /// How long to wait for more requests when `pending` are queued; nil: start the group now.
    package func wait(pending: Int) -> Duration? {
        guard pending < lastRequests else { return nil }
        let wait = min(lastTook / 2, maximumWait)
        return wait > .zero ? wait : nil
    }

    /// The events one group may hold when clients keep `inFlight` events unanswered: about half
    /// of them when the commit is quick; nil: no limit.
    ///
    /// The transaction is one thread's work, while reading and checking requests runs on every
    /// core. A group of everything in flight leaves the cores idle during its transaction (every
    /// client waits for its answer) and the database idle while the next requests are read; two
    /// halves take turns instead, one half's requests read while the other half is written. That
    /// costs a second commit, so it is done only while a commit takes less than a quarter of a
    /// half's work (at the last group's time per event, its commit left out), and for at least
    /// ``minimumSplit`` events: with a disk slow to sync, or a few batches, one group is faster.
    package func limit(inFlight: Int) -> Int? {
        let half = (inFlight + 1) / 2
        guard lastEvents > 0, half >= Self.minimumSplit else { return nil }
        let work = (lastTook - lastCommit) / lastEvents * half
        return lastCommit * 4 < work ? half : nil
    }

    /// The fewest events of a group ``limit(inFlight:)`` splits off.
    package static let minimumSplit = 200

    /// Notes a group written.
    package mutating func record(requests: Int, events: Int, took: Duration, commit: Duration) {
        lastRequests = requests
        lastEvents = events
        lastTook = took
        lastCommit = commit
    }
}
