public import Foundation

/// Sends one HTTP request and returns the whole response: the SDK's only door to the network.
///
/// ``URLSessionTransport`` is the implementation apps use. Supply your own to route requests
/// through an app's networking stack, add certificate pinning, or record traffic.
public protocol HTTPTransport: Sendable {
    /// Sends a request and waits for the complete response.
    ///
    /// A transport should stop receiving a body longer than `request.maximumResponseBytes` and
    /// throw ``TransportError/responseTooLarge(limit:)``; the SDK checks the length again after
    /// the body arrived, for transports that do not.
    ///
    /// ```swift
    /// struct TaggingTransport: HTTPTransport {
    ///     let base: URLSessionTransport
    ///     func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
    ///         var request = request
    ///         request.headers["X-Request-Source"] = "shop-ios"
    ///         return try await base.send(request)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter request: The method, URL, headers, body, timeout and size limit.
    /// - Returns: The status, the header fields and the whole body, whatever the status.
    /// - Throws: ``TransportError`` when no complete response arrived (no connection, timeout,
    ///   a connection closed mid-body, a body over the limit). A response with an error status is
    ///   not an error here.
    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse

    /// Sends a request and returns as soon as the response head arrives; the body follows as it
    /// is received. Live updates read the server's event stream through this.
    ///
    /// For a stream, `request.timeout` bounds silence: when nothing (not even a heartbeat)
    /// arrives for that long, the body ends with ``TransportError/timedOut(seconds:)``.
    /// A default implementation throws, so transports written before live updates still compile;
    /// such a transport cannot carry live updates.
    ///
    /// - Parameter request: The method, URL, headers and timeout (the longest silence allowed).
    /// - Returns: The status and header fields, with the body to read as it arrives.
    /// - Throws: ``TransportError`` when no response head arrived.
    func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream
}

extension HTTPTransport {
    /// Throws: this transport does not stream.
    /// - Parameter request: The request, which is not sent.
    /// - Returns: Nothing: it always throws.
    /// - Throws: ``TransportError/cannotConnect(reason:)`` saying that the transport must
    ///   implement `openStream(_:)` for live updates.
    public func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        throw .cannotConnect(
            reason: "\(type(of: self)) does not implement openStream(_:), which live updates need; "
                + "implement it or use URLSessionTransport"
        )
    }
}

/// An HTTP request.
public struct TransportRequest: Sendable, Hashable {
    /// `GET`, `POST`, …
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// Seconds to wait for the complete response.
    public var timeout: TimeInterval
    /// The longest body the sender accepts, in bytes; nil for no limit. A transport stops
    /// receiving once a body is longer (a `Content-Length` over it refuses the response at its
    /// head) and throws ``TransportError/responseTooLarge(limit:)``.
    public var maximumResponseBytes: Int?

    /// Creates a request.
    /// - Parameters:
    ///   - method: `GET`, `POST`, …
    ///   - url: The full URL.
    ///   - headers: Header fields.
    ///   - body: The body, if any.
    ///   - timeout: Seconds to wait for the complete response.
    ///   - maximumResponseBytes: The longest body accepted, in bytes; nil for no limit.
    public init(
        method: String,
        url: URL,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: TimeInterval,
        maximumResponseBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
    }
}

/// An HTTP response.
public struct TransportResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header fields; look them up with ``header(_:)``, which ignores case.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Header fields.
    ///   - body: The body.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A header field's value, matched without regard to case.
    /// - Parameter name: The field's name, in any case.
    /// - Returns: The field's value, or nil when the response has no such field.
    public func header(_ name: String) -> String? {
        if let value = headers[name] { return value }
        let lower = name.lowercased()
        return headers.first { $0.key.lowercased() == lower }?.value
    }
}

/// A response whose body is still arriving.
public struct TransportStream: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields.
    public var headers: [String: String]
    /// The body's bytes, chunk by chunk as they arrive. It finishes when the server ends the
    /// response and throws a ``TransportError`` when the connection breaks or falls silent.
    public var body: AsyncThrowingStream<Data, any Error>
    /// Closes the connection; the body then finishes.
    public var close: @Sendable () -> Void

    /// Creates a stream.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Header fields.
    ///   - body: The body's bytes as they arrive.
    ///   - close: Closes the connection; the body then finishes.
    public init(
        status: Int,
        headers: [String: String] = [:],
        body: AsyncThrowingStream<Data, any Error>,
        close: @escaping @Sendable () -> Void
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.close = close
    }
}

/// Why no complete response arrived.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing answered: the host is unreachable, nothing listens on the port, or the device is offline.
    case cannotConnect(reason: String)
    /// No complete response within the timeout.
    case timedOut(seconds: TimeInterval)
    /// The connection broke before the response was complete (a truncated body, a reset).
    case connectionLost(reason: String)
    /// The body is longer than the request's ``TransportRequest/maximumResponseBytes``; the
    /// transport stopped receiving it.
    case responseTooLarge(limit: Int)

    /// What happened, in a sentence.
    public var description: String {
        switch self {
        case .cannotConnect(let reason): return "cannot connect: \(reason)"
        case .timedOut(let seconds): return "no complete response within \(seconds) s"
        case .connectionLost(let reason): return "the connection broke before the response was complete: \(reason)"
        case .responseTooLarge(let limit): return "the response is longer than the limit of \(limit) bytes"
        }
    }
}
