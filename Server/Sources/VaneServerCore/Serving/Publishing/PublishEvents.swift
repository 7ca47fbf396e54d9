import NIOConcurrencyHelpers

/// A new template version went live in an environment.
package struct PublishEvent: Sendable, Hashable {
    /// Which environment.
    package var environment: EnvironmentKey
    /// The new version number.
    package var versionNumber: Int64
}

/// Tells subscribers on this node about every version this node starts serving.
///
/// Each subscriber has a small buffer of its own and keeps only the newest events when it falls
/// behind, so a slow subscriber never blocks a publish or another subscriber.
package final class PublishEvents: Sendable {
    private let subscribers = NIOLockedValueBox<[Int: AsyncStream<PublishEvent>.Continuation]>([:])
    private let counter = LockedCounter()
    private let observers = NIOLockedValueBox<[@Sendable (PublishEvent) -> Void]>([])

    /// Creates a broadcaster.
    package init() {}

    /// Announces a version.
    package func published(_ environment: EnvironmentKey, version: Int64) {
        let event = PublishEvent(environment: environment, versionNumber: version)
        for continuation in subscribers.withLockedValue({ Array($0.values) }) { continuation.yield(event) }
        for observer in observers.withLockedValue({ $0 }) { observer(event) }
    }

    /// Calls `observer` with every event, on the publishing task: it must be quick and never block.
    package func observe(_ observer: @escaping @Sendable (PublishEvent) -> Void) {
        observers.withLockedValue { $0.append(observer) }
    }

    /// A stream of the events from now on; it ends when the consumer stops iterating.
    package func subscribe(bufferSize: Int = 16) -> AsyncStream<PublishEvent> {
        let id = Int(truncatingIfNeeded: counter.next())
        let (stream, continuation) = AsyncStream.makeStream(
            of: PublishEvent.self,
            bufferingPolicy: .bufferingNewest(bufferSize)
        )
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLockedValue { $0.removeValue(forKey: id) }
        }
        subscribers.withLockedValue { $0[id] = continuation }
        return stream
    }
}
