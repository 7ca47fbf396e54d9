/// When an ``EventIngestor`` writer waits for more batches before it starts a group.
///
/// A group's commit waits for the disk (`synchronous = FULL`), so the batches that arrive during
/// it wait for the next commit. Under steady load that made groups alternate: the writer started
/// as soon as the first answered client sent again, with that one batch, and the others, a moment
/// behind, queued for a whole commit — two commits for what one could hold. So a writer that finds
/// fewer requests queued than its last group held waits for them, at most half as long as that
/// group's transaction took (and at most ``maximumWait``): less than the commit the latecomers
/// would otherwise wait for. A lone client's group held one request, so it never waits.
package struct GroupGathering: Sendable, Equatable {
    /// Requests the last group held.
    package private(set) var lastRequests: Int
    /// How long the last group's transaction took.
    package private(set) var lastTook: Duration
    /// The longest a writer waits, however slow the last transaction.
    package var maximumWait: Duration

    /// Nothing written yet: the first group starts at once.
    package init(lastRequests: Int = 0, lastTook: Duration = .zero, maximumWait: Duration = .milliseconds(5)) {
        self.lastRequests = lastRequests
        self.lastTook = lastTook
        self.maximumWait = maximumWait
    }

    /// How long to wait for more requests when `pending` are queued; nil: start the group now.
    package func wait(pending: Int) -> Duration? {
        guard pending < lastRequests else { return nil }
        let wait = min(lastTook / 2, maximumWait)
        return wait > .zero ? wait : nil
    }

    /// Notes a group written.
    package mutating func record(requests: Int, took: Duration) {
        lastRequests = requests
        lastTook = took
    }
}
