// URLSession is public API here: on Linux it lives in FoundationNetworking, on Apple's systems in Foundation.
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// ``HTTPTransport`` over `URLSession` (FoundationNetworking on Linux).
///
/// Responses are never cached by URLSession: the SDK does its own caching with ETags.
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport with an ephemeral session of its own.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    /// Creates a transport over an existing session (for its proxy, pinning or metrics settings).
    public init(session: URLSession) {
        self.session = session
    }

    /// Sends a request with URLSession.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let urlRequest = Self.urlRequest(request)
        // URLSession's own timeout counts idle time between packets; the SDK promises a bound on
        // the whole exchange, so a timer cancels the task when the time is up.
        let timedOut = LockedValue(false)
        let outcome: Result<(Data, URLResponse), any Error> = await withCheckedContinuation { continuation in
            // The completion-handler API: FoundationNetworking has no async `data(for:)` on every toolchain.
            let task = session.dataTask(with: urlRequest) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(error))
                } else if let response {
                    continuation.resume(returning: .success((data ?? Data(), response)))
                } else {
                    continuation.resume(returning: .failure(URLError(.badServerResponse)))
                }
            }
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + request.timeout) {
                guard task.state == .running else { return }
                timedOut.withLockedValue { $0 = true }
                task.cancel()
            }
        }
        if case .failure = outcome, timedOut.withLockedValue({ $0 }) { throw .timedOut(seconds: request.timeout) }
        switch outcome {
        case .success(let (data, response)):
            guard let http = response as? HTTPURLResponse else {
                throw .connectionLost(reason: "the answer is not an HTTP response")
            }
            return TransportResponse(status: http.statusCode, headers: Self.headers(of: http), body: data)
        case .failure(let error):
            throw Self.transportError(error, timeout: request.timeout)
        }
    }

    /// Opens a streaming response with a session of its own whose delegate receives the body
    /// chunk by chunk (FoundationNetworking has no `bytes(for:)`). The session copies this
    /// transport's configuration.
    public func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        let delegate = StreamingDataDelegate(timeout: request.timeout)
        let streamSession = URLSession(configuration: session.configuration, delegate: delegate, delegateQueue: nil)
        let task = streamSession.dataTask(with: Self.urlRequest(request))
        delegate.closeOnTermination(task)
        let head = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delegate.awaitHead(continuation)
                task.resume()
                delegate.watchForSilence(of: task)
            }
        } onCancel: {
            task.cancel()
        }
        switch head {
        case .success(let (status, headers)):
            return TransportStream(status: status, headers: headers, body: delegate.body) { task.cancel() }
        case .failure(let error):
            throw error
        }
    }

    static func urlRequest(_ request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url,
            cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: request.timeout
        )
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return headers
    }

    static func transportError(_ error: any Error, timeout: TimeInterval) -> TransportError {
        guard let urlError = error as? URLError else { return .connectionLost(reason: String(describing: error)) }
        switch urlError.code {
        case .timedOut: return .timedOut(seconds: timeout)
        case .cannotConnectToHost: return .cannotConnect(reason: "connection refused")
        case .cannotFindHost, .dnsLookupFailed: return .cannotConnect(reason: "unknown host")
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff:
            return .cannotConnect(reason: "the device is offline")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return .cannotConnect(reason: "the TLS connection failed: \(urlError.localizedDescription)")
        case .networkConnectionLost: return .connectionLost(reason: "the connection was lost")
        default: return .connectionLost(reason: urlError.localizedDescription)
        }
    }
}
