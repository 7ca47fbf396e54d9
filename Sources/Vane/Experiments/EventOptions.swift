public import Foundation

/// How ``VaneClient`` queues and sends exposures and tracked events.
///
/// Events wait in a queue kept in the client's storage directory, so they survive a relaunch and
/// time offline. They are sent in batches: when ``batchSize`` are waiting, every
/// ``flushInterval`` seconds, and on ``VaneClient/flush()`` (call it when the app goes to the
/// background). After a 429 or 5xx answer sending pauses by the client's
/// ``VaneClient/Configuration/backoff``, as fetches do.
public struct EventOptions: Sendable {
    /// The most events kept; when the queue is full the oldest is dropped and counted in
    /// ``VaneClient/droppedEventCount``. 10,000 by default (about 2 MB on disk).
    public var maximumQueuedEvents: Int
    /// Events per request, at most 1,000 (the server's limit). 100 by default.
    public var batchSize: Int
    /// Seconds between automatic sends while events wait. 30 by default; 0 sends only on
    /// ``VaneClient/flush()`` and when a batch is full.
    public var flushInterval: TimeInterval
    /// Called with each exposure as it is recorded (on the reading thread: return quickly), to
    /// forward it to the app's own analytics.
    public var onExposure: (@Sendable (Exposure) -> Void)?

    /// Creates options with the defaults described on each property.
    /// - Parameters:
    ///   - maximumQueuedEvents: The most events kept (at least 1); the oldest is dropped beyond it.
    ///   - batchSize: Events per request, from 1 to 1,000.
    ///   - flushInterval: Seconds between automatic sends; 0 sends only on ``VaneClient/flush()``
    ///     and when a batch is full.
    ///   - onExposure: Called with each exposure as it is recorded, on the reading thread.
    public init(
        maximumQueuedEvents: Int = 10_000,
        batchSize: Int = 100,
        flushInterval: TimeInterval = 30,
        onExposure: (@Sendable (Exposure) -> Void)? = nil
    ) {
        self.maximumQueuedEvents = max(1, maximumQueuedEvents)
        self.batchSize = min(max(1, batchSize), 1_000)
        self.flushInterval = max(0, flushInterval)
        self.onExposure = onExposure
    }
}
