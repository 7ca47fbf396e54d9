import Foundation

/// Sends one HTTP request and returns the whole response: the SDK's only door to the network.
///
/// ``URLSessionTransport`` is the implementation apps use. Supply your own to route requests
/// through an app's networking stack, add certificate pinning, or record traffic.
public protocol HTTPTransport: Sendable {
    /// Sends a request and waits for the complete response.
    ///
    /// - Throws: ``TransportError`` when no complete response arrived (no connection, timeout,
    ///   a connection closed mid-body). A response with an error status is not an error here.
    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse
}

extension HTTPTransport {
    /// Sends a request; no complete response is a ``VaneError/transport(_:)``.
    func exchange(_ request: TransportRequest) async throws(VaneError) -> TransportResponse {
        do {
            return try await send(request)
        } catch {
            throw .transport(error)
        }
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

    /// Creates a request.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
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

/// Why no complete response arrived.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing answered: the host is unreachable, nothing listens on the port, or the device is offline.
    case cannotConnect(reason: String)
    /// No complete response within the timeout.
    case timedOut(seconds: TimeInterval)
    /// The connection broke before the response was complete (a truncated body, a reset).
    case connectionLost(reason: String)

    /// What happened, in a sentence.
    public var description: String {
        switch self {
        case .cannotConnect(let reason): return "cannot connect: \(reason)"
        case .timedOut(let seconds): return "no complete response within \(seconds) s"
        case .connectionLost(let reason): return "the connection broke before the response was complete: \(reason)"
        }
    }
}
