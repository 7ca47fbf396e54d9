import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one task's response for ``URLSessionTransport``: ``TaskRoutingDelegate`` hands it
/// the head, each chunk of the body and the end, on the session's delegate queue.
protocol ResponseReceiver: AnyObject, Sendable {
    /// The response head arrived.
    func received(_ response: URLResponse, task: URLSessionTask)
    /// A chunk of the body arrived.
    func received(_ data: Data, task: URLSessionTask)
    /// The task ended, with the error that ended it, if any; no event follows.
    func completed(error: (any Error)?, task: URLSessionTask)
}

/// A request's bound on its response body, checked while the body arrives.
struct ResponseBodyLimit: Sendable {
    /// The longest body accepted, in bytes.
    var bytes: Int

    init?(_ bytes: Int?) {
        guard let bytes else { return nil }
        self.bytes = bytes
    }

    /// Whether the head already says the body is longer: a `Content-Length` over the limit.
    /// A compressed body's length says nothing (URLSession inflates it), so only the received
    /// bytes count then.
    func isExceeded(byHeadOf response: URLResponse) -> Bool {
        if let http = response as? HTTPURLResponse,
            let encoding = http.value(forHTTPHeaderField: "Content-Encoding"),
            encoding.lowercased() != "identity"
        {
            return false
        }
        return response.expectedContentLength > Int64(bytes)
    }

    /// Whether `count` received bytes are over the limit.
    func isExceeded(byReceived count: Int) -> Bool {
        count > bytes
    }
}
