import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects one whole response for ``URLSessionTransport/send(_:)``. A body over the request's
/// limit is refused as soon as that is known (from `Content-Length`, or once the received bytes
/// pass it), so a hostile server cannot make the app hold more than the limit.
final class BufferedResponseReceiver: ResponseReceiver {
    typealias Outcome = Result<TransportResponse, TransportError>

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var body = Data()
        /// Why this receiver cancelled the task: the body is too large, or the time is up.
        var refusal: TransportError?
    }

    private let state: LockedValue<State>
    private let limit: ResponseBodyLimit?
    private let timeout: TimeInterval

    /// Resumes `continuation` once, when the task completes.
    init(limit: ResponseBodyLimit?, timeout: TimeInterval, continuation: CheckedContinuation<Outcome, Never>) {
        self.limit = limit
        self.timeout = timeout
        state = LockedValue(State(continuation: continuation))
    }

    /// Cancels the task unless it completed: `timeout` bounds the whole exchange, while
    /// URLSession's own timeout counts only the silence between packets.
    func timeOut(_ task: URLSessionTask) {
        refuse(task) { state in state.continuation == nil ? nil : .timedOut(seconds: timeout) }
    }

    func received(_ response: URLResponse, task: URLSessionTask) {
        refuse(task) { state in
            state.body = Data()
            guard let limit, limit.isExceeded(byHeadOf: response) else { return nil }
            return .responseTooLarge(limit: limit.bytes)
        }
    }

    func received(_ data: Data, task: URLSessionTask) {
        refuse(task) { state in
            state.body.append(data)
            guard let limit, limit.isExceeded(byReceived: state.body.count) else { return nil }
            state.body = Data()
            return .responseTooLarge(limit: limit.bytes)
        }
    }

    func completed(error: (any Error)?, task: URLSessionTask) {
        finish(response: task.response, error: error)
    }

    /// Takes a response that arrived whole (a caller's session hands it to a completion
    /// handler): its length is checked only now.
    func receivedWhole(_ data: Data?, response: URLResponse?, error: (any Error)?) {
        state.withLockedValue { state in
            guard state.refusal == nil, let data else { return }
            if let limit, limit.isExceeded(byReceived: data.count) {
                state.refusal = .responseTooLarge(limit: limit.bytes)
            } else {
                state.body = data
            }
        }
        finish(response: response, error: error)
    }

    private func finish(response: URLResponse?, error: (any Error)?) {
        let (continuation, outcome) = state.withLockedValue { state in
            defer { state.continuation = nil }
            return (state.continuation, self.outcome(state, response: response, error: error))
        }
        continuation?.resume(returning: outcome)
    }

    private func outcome(_ state: State, response: URLResponse?, error: (any Error)?) -> Outcome {
        if let refusal = state.refusal { return .failure(refusal) }
        if let error { return .failure(URLSessionTransport.transportError(error, timeout: timeout)) }
        guard let http = response as? HTTPURLResponse else {
            return .failure(.connectionLost(reason: "the answer is not an HTTP response"))
        }
        let headers = URLSessionTransport.headers(of: http)
        return .success(TransportResponse(status: http.statusCode, headers: headers, body: state.body))
    }

    /// Runs `decide` on the state unless the task was already refused, and cancels the task when
    /// it returns a refusal.
    private func refuse(_ task: URLSessionTask, _ decide: (inout State) -> TransportError?) {
        let refused = state.withLockedValue { state in
            guard state.refusal == nil else { return false }
            state.refusal = decide(&state)
            return state.refusal != nil
        }
        if refused { task.cancel() }
    }
}
