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
