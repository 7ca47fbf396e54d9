import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one streaming response for ``URLSessionTransport/openStream(_:)``: the head resumes
/// the caller, each chunk goes into ``body``, and silence longer than the timeout cancels the task.
final class StreamingDataDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    typealias Head = Result<(status: Int, headers: [String: String]), TransportError>

    private struct State {
        var head: CheckedContinuation<Head, Never>?
        var completion: TransportError??
        var lastActivity = Date()
        var timedOut = false
    }

    /// The body's chunks.
    let body: AsyncThrowingStream<Data, any Error>
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    private let state = LockedValue(State())
    private let timeout: TimeInterval

    init(timeout: TimeInterval) {
        self.timeout = timeout
        // Unbounded: dropping a chunk would corrupt the stream, and the reader is a parser that keeps up.
        (body, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
    }

    /// Cancels the task when the body's reader stops (or the body ends).
    func closeOnTermination(_ task: URLSessionTask) {
        continuation.onTermination = { _ in task.cancel() }
    }

    /// Resumes `head` when the response head arrives, or with the error if the task ends first.
    func awaitHead(_ head: CheckedContinuation<Head, Never>) {
        let finished: TransportError?? = state.withLockedValue { state in
            if let completion = state.completion { return completion }
            state.head = head
            return nil
        }
        if let finished {
            head.resume(returning: .failure(finished ?? .connectionLost(reason: "the server sent no response")))
        }
    }

    /// Cancels the task once nothing has arrived for the timeout; checks four times per timeout.
    func watchForSilence(of task: URLSessionTask) {
        let interval = max(timeout / 4, 0.05)
        DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self else { return }
            let silent: Bool? = state.withLockedValue { state in
                guard state.completion == nil else { return nil }
                guard Date().timeIntervalSince(state.lastActivity) >= timeout else { return false }
                state.timedOut = true
                return true
            }
            switch silent {
            case true?: task.cancel()
            case false?: watchForSilence(of: task)
            case nil: break
            }
        }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let head = state.withLockedValue { state in
            defer { state.head = nil }
            state.lastActivity = Date()
            return state.head
        }
        if let http = response as? HTTPURLResponse {
            head?.resume(returning: .success((http.statusCode, URLSessionTransport.headers(of: http))))
        } else {
            head?.resume(returning: .failure(.connectionLost(reason: "the answer is not an HTTP response")))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLockedValue { $0.lastActivity = Date() }
        continuation.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (head, failure): (CheckedContinuation<Head, Never>?, TransportError?) = state.withLockedValue { state in
            let failure = error.map {
                state.timedOut
                    ? TransportError.timedOut(seconds: timeout)
                    : URLSessionTransport.transportError($0, timeout: timeout)
            }
            state.completion = .some(failure)
            defer { state.head = nil }
            return (state.head, failure)
        }
        head?.resume(returning: .failure(failure ?? .connectionLost(reason: "the server sent no response")))
        if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
        // A session keeps its delegate until it is invalidated.
        session.finishTasksAndInvalidate()
    }
}
