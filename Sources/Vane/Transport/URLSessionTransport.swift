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
///
/// A redirect within the request's origin (scheme, host and port) is followed as it is; one to
/// another origin is followed without the credential headers (`Authorization`, `X-API-Key`,
/// `Proxy-Authorization`, `Cookie`); one from `https` to `http` is not followed, and the redirect
/// response is the answer. A body longer than the request's
/// ``TransportRequest/maximumResponseBytes`` is refused as soon as its head or its received bytes
/// say so, with ``TransportError/responseTooLarge(limit:)``.
public struct URLSessionTransport: HTTPTransport {
    private let sessions: TransportSessions

    /// Creates a transport with an ephemeral session of its own, whose requests share connections.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        sessions = TransportSessions(configuration: configuration)
    }

    /// Creates a transport over an existing session (for its proxy, pinning or metrics settings).
    ///
    /// Requests keep your session and its delegate; each task gets a task delegate of its own
    /// that takes only the redirect decision, by the same rule as the transport's own session.
    /// Only a session's delegate sees a body arrive chunk by chunk, so over your session a body is
    /// received whole before its length is checked. Event streams use a second session with your
    /// session's configuration but without its delegate.
    ///
    /// ```swift
    /// let transport = try URLSessionTransport(session: pinnedSession)
    /// let configuration = VaneClient.Configuration(
    ///     serverURL: serverURL, project: "shop", environment: "production", clientKey: clientKey,
    ///     transport: transport)
    /// ```
    ///
    /// - Parameter session: A data session (not a background one); it stays yours to invalidate.
    /// - Throws: ``URLSessionTransportError/backgroundSession(identifier:)`` for a background
    ///   session: it runs only upload and download tasks handed to the system, and a data task
    ///   with a completion handler on it raises an Objective-C exception that ends the app.
    public init(session: URLSession) throws(URLSessionTransportError) {
        // Only background configurations have an identifier.
        // https://developer.apple.com/documentation/foundation/urlsessionconfiguration/identifier
        try Self.checkNotBackground(identifier: session.configuration.identifier)
        sessions = TransportSessions(caller: session)
    }

    /// Refuses a session whose configuration has an identifier: only background ones have.
    static func checkNotBackground(identifier: String?) throws(URLSessionTransportError) {
        if let identifier { throw .backgroundSession(identifier: identifier) }
    }

    /// Sends a request with URLSession.
    /// - Parameter request: The method, URL, headers, body, timeout and size limit.
    /// - Returns: The status, the header fields and the whole body, whatever the status.
    /// - Throws: ``TransportError`` when no complete response arrived in time.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let urlRequest = Self.urlRequest(request)
        let outcome = await withCheckedContinuation { continuation in
            let receiver = BufferedResponseReceiver(
                limit: ResponseBodyLimit(request.maximumResponseBytes),
                timeout: request.timeout,
                continuation: continuation
            )
            let task = sessions.dataTask(urlRequest, receiver: receiver)
            task.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + request.timeout) { [weak receiver] in
                receiver?.timeOut(task)
            }
        }
        return try outcome.get()
    }

    /// Opens a streaming response; the transport's receiving session hands the body over chunk
    /// by chunk (FoundationNetworking has no `bytes(for:)`).
    /// - Parameter request: The method, URL, headers and timeout (the longest silence allowed).
    /// - Returns: The status and header fields, with the body to read as it arrives.
    /// - Throws: ``TransportError`` when no response head arrived.
    public func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        let receiver = StreamingResponseReceiver(
            timeout: request.timeout,
            limit: ResponseBodyLimit(request.maximumResponseBytes)
        )
        let task = sessions.routedTask(Self.urlRequest(request), receiver: receiver)
        receiver.closeOnTermination(task)
        let head = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                receiver.awaitHead(continuation)
                task.resume()
                receiver.watchForSilence(of: task)
            }
        } onCancel: {
            task.cancel()
        }
        switch head {
        case .success(let (status, headers)):
            return TransportStream(status: status, headers: headers, body: receiver.body) { receiver.close() }
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
