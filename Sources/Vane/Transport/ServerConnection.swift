import Foundation
import VaneCore

/// What both clients need to talk to one environment of a Vane server: apps' ``VaneClient`` (a
/// client key) and servers' ``LocalEvaluationClient`` (a server key) build their requests and read
/// refusals here, so the path, the headers and the error envelope are handled in one place.
struct ServerConnection: Sendable {
    /// The server's base URL; a path in it (a reverse proxy's prefix) is kept.
    var serverURL: URL
    /// The environment's address.
    var address: EnvironmentAddress
    /// The API key sent as a bearer token.
    var apiKey: String
    /// Seconds a request waits for the server's complete answer.
    var timeout: TimeInterval
    /// How requests are sent.
    var transport: any HTTPTransport
    /// Whether `http://` may be used for a host other than this machine.
    var allowsInsecureHTTP = false
    /// The largest response body accepted, in bytes.
    var maximumResponseBytes = ServerConnection.defaultMaximumResponseBytes

    /// 16 MiB: a template of 3,000 parameters is about 650 KB.
    static let defaultMaximumResponseBytes = 16 * 1024 * 1024

    /// Refuses plain `http://` to any host but this machine's loopback (``LoopbackHost``: a
    /// loopback address literal or `localhost`), unless the app opted in: the API key travels in
    /// every request, and anyone on the path could read it.
    func checkTransportSecurity() throws(VaneError) {
        guard serverURL.scheme?.lowercased() == "http", !allowsInsecureHTTP else { return }
        if LoopbackHost.contains(serverURL.host ?? "") { return }
        throw .invalidConfiguration(
            "\(serverURL.absoluteString) is plain http:// to another machine, which would send the key in clear text; "
                + "use https://, or set allowsInsecureHTTP = true for a server on a network you trust"
        )
    }

    /// Sends a request: refused before anything is sent when the URL is insecure. The transport
    /// stops receiving a body over ``maximumResponseBytes``, and a longer body from a transport
    /// that ignores the limit is refused too: either is a ``VaneError/malformedResponse(reason:)``.
    func send(_ request: TransportRequest) async throws(VaneError) -> TransportResponse {
        try checkTransportSecurity()
        var bounded = request
        bounded.maximumResponseBytes = min(request.maximumResponseBytes ?? .max, maximumResponseBytes)
        let response: TransportResponse
        do {
            response = try await transport.send(bounded)
        } catch .responseTooLarge {
            throw tooLarge("the response is longer than")
        } catch {
            throw .transport(error)
        }
        guard response.body.count <= maximumResponseBytes else {
            throw tooLarge("the response has \(response.body.count) bytes, more than")
        }
        return response
    }

    private func tooLarge(_ what: String) -> VaneError {
        .malformedResponse(reason: "\(what) the limit of \(maximumResponseBytes) bytes (maximumResponseBytes)")
    }

    /// Opens an event stream, refused like ``send(_:)`` when the URL is insecure.
    func openStream(_ request: TransportRequest) async throws(VaneError) -> TransportStream {
        try checkTransportSecurity()
        do {
            return try await transport.openStream(request)
        } catch {
            throw .transport(error)
        }
    }

    /// The headers every request carries: the key and the SDK's name.
    var identifyingHeaders: [String: String] {
        ["Authorization": "Bearer \(apiKey)", "User-Agent": "vane-swift/\(VaneClient.sdkVersion)"]
    }

    /// `{serverURL}/v1/projects/{project}/environments/{environment}/{resource}`, each id encoded
    /// as one path segment by ``EnvironmentAddress/path(_:)``.
    func url(_ resource: EnvironmentResource) -> URL {
        let path = address.path(resource)
        guard var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false) else {
            return serverURL.appendingPathComponent(path)
        }
        let base = components.percentEncodedPath
        components.percentEncodedPath = (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
        return components.url ?? serverURL.appendingPathComponent(path)
    }

    /// A request for one of the environment's resources, with the identifying headers.
    func request(
        _ method: String,
        _ resource: EnvironmentResource,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: TimeInterval? = nil
    ) -> TransportRequest {
        TransportRequest(
            method: method,
            url: url(resource),
            headers: identifyingHeaders.merging(headers) { _, given in given },
            body: body,
            timeout: timeout ?? self.timeout
        )
    }

    /// A refusal (a 4xx other than 429) as the error both clients throw, with the server's message.
    static func rejection(_ response: TransportResponse) -> VaneError {
        let message = ErrorEnvelope(bytes: Array(response.body))?.message ?? "HTTP \(response.status)"
        return .rejected(status: response.status, message: message)
    }
}
