import Foundation
import NIOConcurrencyHelpers

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a Server-Sent Events response as it arrives, through a `URLSessionDataDelegate`
/// (FoundationNetworking has no `bytes(for:)`).
final class EventStreamClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let received = NIOLockedValueBox<(status: Int?, text: String, finished: Bool)>((nil, "", false))
    private var session: URLSession?
    private var task: URLSessionDataTask?

    /// Opens the stream.
    init(url: URL, key: String, lastEventId: String? = nil) {
        super.init()
        var request = URLRequest(url: url)
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventId { request.setValue(lastEventId, forHTTPHeaderField: "Last-Event-ID") }
        request.timeoutInterval = 120
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        self.session = session
        let task = session.dataTask(with: request)
        self.task = task
        task.resume()
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        received.withLockedValue { $0.status = (response as? HTTPURLResponse)?.statusCode }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received.withLockedValue { $0.text += String(decoding: data, as: UTF8.self) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        received.withLockedValue { $0.finished = true }
    }

    /// Everything received so far.
    var text: String { received.withLockedValue { $0.text } }
    /// The response status, once the head arrived.
    var status: Int? { received.withLockedValue { $0.status } }
    /// Whether the server ended the response.
    var finished: Bool { received.withLockedValue { $0.finished } }

    /// Waits until the received text satisfies `condition` (or `timeout` passes); returns whether it did.
    func wait(timeout: TimeInterval = 10, until condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(text) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition(text)
    }

    /// Closes the connection.
    func close() {
        task?.cancel()
        session?.invalidateAndCancel()
    }
}
