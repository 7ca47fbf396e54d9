import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of every session ``URLSessionTransport`` makes: hands each task's events to the
/// ``ResponseReceiver`` registered for it, and follows redirects by ``RedirectRule``.
///
/// One delegate per session rather than a session per request, so that requests share
/// connections; a per-task delegate would do on Apple's systems, but FoundationNetworking delivers
/// a body only to the session's delegate.
final class TaskRoutingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let receivers = LockedValue<[Int: any ResponseReceiver]>([:])

    /// Routes `task`'s events to `receiver` until the task completes; call before resuming it.
    func route(_ task: URLSessionTask, to receiver: any ResponseReceiver) {
        receivers.withLockedValue { $0[task.taskIdentifier] = receiver }
    }

    private func receiver(of task: URLSessionTask) -> (any ResponseReceiver)? {
        receivers.withLockedValue { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        receiver(of: dataTask)?.received(response, task: dataTask)
        // Receivers refuse a response by cancelling its task: FoundationNetworking ignores `.cancel`.
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        receiver(of: dataTask)?.received(data, task: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let receiver = receivers.withLockedValue { $0.removeValue(forKey: task.taskIdentifier) }
        receiver?.completed(error: error, task: task)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(RedirectRule.request(following: request, task: task))
    }
}
