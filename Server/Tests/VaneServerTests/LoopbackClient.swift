import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A test's HTTP/1.1 connection to a server on loopback. HummingbirdTesting's `.live` client gives
/// up after 20 s, which timed a loaded machine rather than the server (a 1,000-event batch on
/// PostgreSQL beside every other suite on 2 cores); this one waits as long as the suites' time
/// limits allow (``TestServer/ownConnection``).
struct LoopbackClient: Sendable {
    /// A response as the tests read it.
    struct Response: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
    }

    /// The server's port (for raw sockets and connections of a test's own).
    let port: Int?
    private let connection: TestClient

    /// Connects to the live server `client` talks to, runs `body`, and closes the connection.
    static func with<R: Sendable>(
        _ client: any TestClientProtocol,
        _ body: (LoopbackClient) async throws -> R
    ) async throws -> R {
        let port = try #require(client.port)
        let connection = TestClient(host: "localhost", port: port, configuration: TestServer.ownConnection)
        connection.connect()
        do {
            let result = try await body(LoopbackClient(port: port, connection: connection))
            try await connection.shutdown()
            return result
        } catch {
            try? await connection.shutdown()
            throw error
        }
    }

    /// Sends a request on the connection and waits for its response.
    func executeRequest(
        uri: String,
        method: HTTPRequest.Method,
        headers: HTTPFields = [:],
        body: ByteBuffer? = nil
    ) async throws -> Response {
        var headers = headers
        headers[.connection] = "keep-alive"
        let response = try await connection.execute(
            TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body)
        )
        return Response(status: response.status, headers: response.headers, body: response.body ?? ByteBuffer())
    }
}
