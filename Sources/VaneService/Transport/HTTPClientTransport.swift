// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
public import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
public import Vane

/// `HTTPTransport` over swift-server's async-http-client: how a service reaches Vane.
///
/// ``VaneService`` uses it by default. It runs on SwiftNIO like Hummingbird and Vapor, so a
/// service needs no second HTTP stack, and it avoids FoundationNetworking's `URLSession` on
/// Linux, whose sockets can outlive their dispatch sources when a server goes away (a busy loop
/// in libdispatch, swift-corelibs-foundation issue 4791). Cancelling the task that sends a
/// request closes its connection at once, so a service group shuts down without waiting for a
/// download's timeout.
///
/// Redirects are followed by the SDK's rule, `TransportRedirect`, as the app SDK's
/// `URLSessionTransport` follows them: within the origin as they are, to another origin without
/// the credential headers, never from `https` to `http` (the redirect response is then the
/// answer), at most 5 in a row. async-http-client's own rule would follow a downgrade, sending the
/// request body in clear text, so the transport follows redirects itself: a client you pass must
/// not follow them (`redirectConfiguration = .disallow`), or its responses are refused. A body
/// longer than the request's
/// `TransportRequest.maximumResponseBytes` is refused as soon as its `Content-Length` or
/// its received bytes say so.
@available(VaneServerSDK, *)
public struct HTTPClientTransport: HTTPTransport {
    /// The client that sends the requests.
    public let client: HTTPClient

    /// Creates a transport over a client: ``sharedClient`` by default, which needs no shutdown.
    /// Pass your own to choose its event loops, proxy or TLS settings; you shut it down. Set its
    /// `redirectConfiguration` to `.disallow`, as ``sharedClient`` does: the transport follows
    /// redirects itself, and refuses a response the client reached by following one (a
    /// `TransportError.cannotConnect(reason:)` that says so). Set its
    /// `connectionPool.retryConnectionEstablishment` to false, as ``sharedClient`` does, or a
    /// refused connection is retried until the request's timeout and reported as a timeout.
    ///
    /// ```swift
    /// var settings = HTTPClient.Configuration(proxy: .server(host: "proxy.internal", port: 3128))
    /// settings.redirectConfiguration = .disallow
    /// settings.connectionPool.retryConnectionEstablishment = false
    /// let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
    /// let vane = VaneService(configuration: .init(client: clientConfiguration,
    ///                                             transport: HTTPClientTransport(client: client)))
    /// ```
    ///
    /// - Parameter client: The client that sends the requests; one you pass stays yours to shut down.
    public init(client: HTTPClient = HTTPClientTransport.sharedClient) {
        self.client = client
    }

    /// The client transports use unless given another: `HTTPClient.shared`'s settings, except
    /// that a connection that cannot be made fails the request at once (the SDK has its own
    /// retry and backoff rules) and redirects are left to the transport. It lives as long as the
    /// process, like `HTTPClient.shared`, so it is never shut down.
    public static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Sends a request and receives the whole response within `request.timeout`.
    /// - Parameter request: The method, URL, headers, body, timeout and size limit.
    /// - Returns: The status, the header fields and the whole body, whatever the status.
    /// - Throws: `TransportError` when no complete response arrived in time, the body was over
    ///   the limit, or the connection failed.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let outcome = await withTaskGroup(of: Result<TransportResponse, TransportError>?.self) { group in
            group.addTask {
                do {
                    return .success(try await receiveWhole(request))
                } catch {
                    return .failure(Self.transportError(error, timeout: request.timeout, afterHead: false))
                }
            }
            group.addTask {
                // The deadline of `execute` ends with the head; this one covers the body as well.
                try? await Task.sleep(nanoseconds: Self.nanoseconds(request.timeout))
                return Task.isCancelled ? nil : .failure(.timedOut(seconds: request.timeout))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch outcome {
        case .success(let response): return response
        case .failure(let error): throw error
        // Only when the calling task was cancelled before either finished.
        case nil: throw .connectionLost(reason: "the request was cancelled")
        }
    }

    /// Opens a streaming response; the body ends with `TransportError.timedOut(seconds:)`
    /// when nothing arrives for `request.timeout` seconds.
    /// - Parameter request: The method, URL, headers and timeout (the longest silence allowed).
    /// - Returns: The status and header fields, with the body to read as it arrives.
    /// - Throws: `TransportError` when no response head arrived.
    public func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        let response: HTTPClientResponse
        do {
            response = try await execute(request)
        } catch {
            throw Self.transportError(error, timeout: request.timeout, afterHead: false)
        }
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let lastArrival = NIOLockedValueBox(ContinuousClock.now)
        let reader = Task {
            do {
                for try await chunk in response.body {
                    lastArrival.withLockedValue { $0 = .now }
                    continuation.yield(Data(chunk.readableBytesView))
                }
                continuation.finish()
            } catch {
                // Closed by the reader (cancelled) ends the body quietly; anything else says what broke.
                let failure: (any Error)? =
                    Task.isCancelled ? nil : Self.transportError(error, timeout: request.timeout, afterHead: true)
                continuation.finish(throwing: failure)
            }
        }
        let silence = Duration.nanoseconds(Int64(Self.nanoseconds(request.timeout)))
        let watchdog = Task {
            while !Task.isCancelled {
                let quietUntil = lastArrival.withLockedValue { $0 } + silence
                if ContinuousClock.now >= quietUntil {
                    continuation.finish(throwing: TransportError.timedOut(seconds: request.timeout))
                    reader.cancel()
                    return
                }
                try? await Task.sleep(until: quietUntil, clock: .continuous)
            }
        }
        continuation.onTermination = { _ in
            reader.cancel()
            watchdog.cancel()
        }
        return TransportStream(
            status: Int(response.status.code),
            headers: Self.headers(response.headers),
            body: body
        ) {
            continuation.finish()
        }
    }

    /// The most redirects followed in a row; the next redirect response is the answer.
    public static let maximumRedirects = 5

    /// Sends a request and follows its redirects by `TransportRedirect`; the final
    /// response, whose body is still to be read.
    private func execute(_ request: TransportRequest) async throws -> HTTPClientResponse {
        let deadline = Self.deadline(request.timeout)
        var current = request
        var hops = 0
        while true {
            let response = try await client.execute(Self.clientRequest(current), deadline: deadline)
            guard response.history.count <= 1 else {
                throw TransportError.cannotConnect(
                    reason:
                        "the HTTPClient followed a redirect itself; create it with redirectConfiguration = .disallow "
                        + "and let HTTPClientTransport follow redirects"
                )
            }
            guard hops < Self.maximumRedirects, let next = Self.redirect(current, original: request, response: response)
            else { return response }
            // The redirect's own body is not the answer; read it (briefly) so the connection is reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            current = next
            hops += 1
        }
    }

    /// The request a redirect response leads to, or nil when it is the answer: not a redirect,
    /// no usable `Location`, or a redirect the rule refuses.
    static func redirect(
        _ request: TransportRequest,
        original: TransportRequest,
        response: HTTPClientResponse
    ) -> TransportRequest? {
        let status = response.status.code
        guard [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var next = request
        next.url = target
        switch TransportRedirect.decision(original: original.url, current: request.url, target: target) {
        case .refuse: return nil
        case .follow: break
        case .followWithoutCredentials:
            next.headers = next.headers.filter { !TransportRedirect.credentialHeaders.contains($0.key.lowercased()) }
        }
        // As browsers and URLSession: 303 becomes a GET, and so does a POST redirected by 301 or 302.
        if (status == 303 && request.method != "HEAD") || ((status == 301 || status == 302) && request.method == "POST")
        {
            next.method = "GET"
            next.body = nil
            next.headers = next.headers.filter { !["content-type", "content-length"].contains($0.key.lowercased()) }
        }
        return next
    }

    private func receiveWhole(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await execute(request)
        let limit = request.maximumResponseBytes
        if let limit, let declared = response.headers.first(name: "Content-Length").flatMap(Int.init), declared > limit
        {
            throw TransportError.responseTooLarge(limit: limit)
        }
        var bytes = Data()
        do {
            for try await chunk in response.body {
                if let limit, bytes.count + chunk.readableBytes > limit {
                    throw TransportError.responseTooLarge(limit: limit)
                }
                bytes.append(contentsOf: chunk.readableBytesView)
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw Self.transportError(error, timeout: request.timeout, afterHead: true)
        }
        return TransportResponse(
            status: Int(response.status.code),
            headers: Self.headers(response.headers),
            body: bytes
        )
    }

    static func clientRequest(_ request: TransportRequest) -> HTTPClientRequest {
        var clientRequest = HTTPClientRequest(url: request.url.absoluteString)
        clientRequest.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { clientRequest.headers.replaceOrAdd(name: name, value: value) }
        if let body = request.body { clientRequest.body = .bytes(ByteBuffer(bytes: body)) }
        return clientRequest
    }

    /// Header fields as the SDK reads them; repeated fields are joined with commas (RFC 9110).
    static func headers(_ fields: HTTPHeaders) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in fields {
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return headers
    }

    static func deadline(_ seconds: TimeInterval) -> NIODeadline {
        .now() + .nanoseconds(Int64(nanoseconds(seconds)))
    }

    static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        UInt64(min(max(seconds, 0.001), 86_400) * 1_000_000_000)
    }

    /// The SDK's words for what went wrong; `afterHead` says whether the response had begun.
    static func transportError(_ error: any Error, timeout: TimeInterval, afterHead: Bool) -> TransportError {
        if let error = error as? TransportError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return .timedOut(seconds: timeout)
            case .connectTimeout:
                return .cannotConnect(reason: "no connection within the timeout")
            case .remoteConnectionClosed:
                return .connectionLost(reason: "the server closed the connection")
            case .cancelled:
                return .connectionLost(reason: "the request was cancelled")
            default:
                break
            }
        }
        if error is CancellationError { return .connectionLost(reason: "the request was cancelled") }
        let reason = String(describing: error)
        return afterHead ? .connectionLost(reason: reason) : .cannotConnect(reason: reason)
    }
}
#endif
