import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives one streaming response for ``URLSessionTransport/openStream(_:)``: the head resumes
/// the caller, each chunk goes into ``body``, and silence longer than the timeout, or more bytes
/// than the request's limit, cancels the task.
final class StreamingResponseReceiver: ResponseReceiver {
    typealias Head = Result<(status: Int, headers: [String: String]), TransportError>

    private struct State {
        var head: CheckedContinuation<Head, Never>?
        var completion: TransportError??
        var lastActivity = Date()
        var receivedBytes = 0
        /// Why this receiver cancelled the task: silence, or too many bytes.
        var refusal: TransportError?
    }

    /// The body's chunks.
    let body: AsyncThrowingStream<Data, any Error>
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    private let state = LockedValue(State())
    private let timeout: TimeInterval
    private let limit: ResponseBodyLimit?

    init(timeout: TimeInterval, limit: ResponseBodyLimit?) {
        self.timeout = timeout
        self.limit = limit
        // Unbounded: dropping a chunk would corrupt the stream, and the reader is a parser that keeps up.
        (body, continuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
    }

    /// Cancels the task when the body's reader stops (or the body ends).
    func closeOnTermination(_ task: URLSessionTask) {
        continuation.onTermination = { _ in task.cancel() }
    }

    /// Ends the body without an error and, through its termination, cancels the task: what
    /// ``TransportStream/close`` does.
    func close() {
        continuation.finish()
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
                state.refusal = state.refusal ?? .timedOut(seconds: timeout)
                return true
            }
            switch silent {
            case true?: task.cancel()
            case false?: watchForSilence(of: task)
            case nil: break
            }
        }
    }

    func received(_ response: URLResponse, task: URLSessionTask) {
        let tooLarge = limit.flatMap { $0.isExceeded(byHeadOf: response) ? $0.bytes : nil }
        let head = state.withLockedValue { state in
            defer { state.head = nil }
            state.lastActivity = Date()
            if let tooLarge { state.refusal = .responseTooLarge(limit: tooLarge) }
            return state.head
        }
        if let tooLarge {
            head?.resume(returning: .failure(.responseTooLarge(limit: tooLarge)))
            task.cancel()
        } else if let http = response as? HTTPURLResponse {
            head?.resume(returning: .success((http.statusCode, URLSessionTransport.headers(of: http))))
        } else {
            head?.resume(returning: .failure(.connectionLost(reason: "the answer is not an HTTP response")))
        }
    }

    func received(_ data: Data, task: URLSessionTask) {
        let refused = state.withLockedValue { state in
            guard state.refusal == nil else { return true }
            state.lastActivity = Date()
            state.receivedBytes += data.count
            guard let limit, limit.isExceeded(byReceived: state.receivedBytes) else { return false }
            state.refusal = .responseTooLarge(limit: limit.bytes)
            return true
        }
        if refused { task.cancel() } else { continuation.yield(data) }
    }

    func completed(error: (any Error)?, task: URLSessionTask) {
        let (head, failure): (CheckedContinuation<Head, Never>?, TransportError?) = state.withLockedValue { state in
            let failure = state.refusal ?? error.map { URLSessionTransport.transportError($0, timeout: timeout) }
            state.completion = .some(failure)
            defer { state.head = nil }
            return (state.head, failure)
        }
        head?.resume(returning: .failure(failure ?? .connectionLost(reason: "the server sent no response")))
        if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
    }
}
