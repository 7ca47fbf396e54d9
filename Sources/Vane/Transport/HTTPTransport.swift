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
    /// - Throws: ``TransportError`` when no response head arrived.
    func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream
}

extension HTTPTransport {
    /// Throws: this transport does not stream.
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
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A header field's value, matched without regard to case.
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
