import Foundation

/// Hands every element to every current subscriber's `AsyncStream`.
///
/// Each subscriber buffers at most `bufferSize` elements and drops the oldest beyond that, so a
/// subscriber that stops reading never blocks the client or the other subscribers.
final class Broadcaster<Element: Sendable>: Sendable {
    private let continuations = LockedValue<[UUID: AsyncStream<Element>.Continuation]>([:])
    private let bufferSize: Int

    init(bufferSize: Int = 64) {
        self.bufferSize = bufferSize
    }

    /// A new subscription; it ends when the consumer stops iterating or the broadcaster finishes.
    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self,
            bufferingPolicy: .bufferingNewest(bufferSize)
        )
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            self?.continuations.withLockedValue { _ = $0.removeValue(forKey: id) }
        }
        continuations.withLockedValue { $0[id] = continuation }
        return stream
    }

    /// How many subscriptions are open.
    var subscriberCount: Int { continuations.withLockedValue { $0.count } }

    /// Sends an element to every subscriber.
    func send(_ element: Element) {
        for continuation in continuations.withLockedValue({ Array($0.values) }) { continuation.yield(element) }
    }

    /// Ends every subscription.
    func finish() {
        for continuation in continuations.withLockedValue({ Array($0.values) }) { continuation.finish() }
    }

    deinit {
        for continuation in continuations.withLockedValue({ Array($0.values) }) { continuation.finish() }
    }
}
