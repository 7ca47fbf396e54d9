import AsyncHTTPClient
import Foundation
import NIOSSL
import Testing
import Vane
import VaneService

/// The server SDK's `HTTPClientTransport` follows redirects by the app SDK's rule: real servers on
/// loopback, one of them speaking HTTPS with the test certificate, record what reached them.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ServerTransportRedirectTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("CLITests/Fixtures")
    static let certificate = fixtures.appendingPathComponent("test-tls-cert.pem").path
    static let key = fixtures.appendingPathComponent("test-tls-key.pem").path
    static let nowhere = URL(fileURLWithPath: "/")

    /// Clients that trust the test certificate, one leaving redirects to the transport; like
    /// `HTTPClientTransport.sharedClient`, they live as long as the test process.
    static let leavingRedirects = makeClient(followingRedirects: false)
    static let followingRedirects = makeClient(followingRedirects: true)

    static func makeClient(followingRedirects: Bool) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificate)
        configuration.tlsConfiguration = tls
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = followingRedirects ? .follow(max: 5, allowCycles: false) : .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    static func https() throws -> FaultProxy {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
        )
        return try FaultProxy(upstream: nowhere, tls: try NIOSSLContext(configuration: configuration))
    }

    static func post(_ url: URL) -> TransportRequest {
        TransportRequest(
            method: "POST",
            url: url,
            headers: ["Authorization": "Bearer vane_server_secret", "Content-Type": "application/json"],
            body: Data(#"{"context":{"randomizationId":"user-1","email":"ada@example.com"}}"#.utf8),
            timeout: 10
        )
    }

    @Test func httpsIsNeverRedirectedToPlainHTTP() async throws {
        let plain = try FaultProxy(upstream: Self.nowhere)
        defer { plain.shutdown() }
        plain.set(.respond(status: 200, headers: [:], body: "landed"))
        let secure = try Self.https()
        defer { secure.shutdown() }
        let target = plain.url.appendingPathComponent("fetch").absoluteString
        secure.set(.respond(status: 307, headers: ["Location": target], body: ""))
        let client = Self.leavingRedirects

        let response = try await HTTPClientTransport(client: client).send(
            Self.post(secure.url.appendingPathComponent("fetch"))
        )
        #expect(response.status == 307, "the redirect response itself is the answer")
        #expect(secure.received.count == 1)
        #expect(plain.received.isEmpty, "neither the key nor the user's context travelled in clear text")
    }

    @Test func aRedirectToAnotherOriginDropsTheKeyAndKeepsThePost() async throws {
        let other = try FaultProxy(upstream: Self.nowhere)
        defer { other.shutdown() }
        other.set(.respond(status: 200, headers: [:], body: "landed"))
        let first = try FaultProxy(upstream: Self.nowhere)
        defer { first.shutdown() }
        first.set(
            .respond(
                status: 307,
                headers: ["Location": other.url.appendingPathComponent("fetch").absoluteString],
                body: ""
            )
        )
        let client = Self.leavingRedirects

        let response = try await HTTPClientTransport(client: client).send(
            Self.post(first.url.appendingPathComponent("fetch"))
        )
        #expect(response.status == 200)
        let landing = try #require(other.received.first)
        #expect(landing.method == "POST" && landing.path == "/fetch")
        #expect(landing.headers["authorization"] == nil, "another origin never receives the key")
        #expect(landing.body.contains("randomizationId"), "307 keeps the body")
        #expect(first.received.first?.headers["authorization"] == "Bearer vane_server_secret")
    }

    @Test func aRedirectWithinTheOriginKeepsTheKey() async throws {
        let server = try FaultProxy(upstream: Self.nowhere)
        defer { server.shutdown() }
        // Every request is redirected to the same origin: the key stays on each hop, and after
        // five hops the redirect itself is the answer.
        server.set(.respond(status: 302, headers: ["Location": "/again"], body: ""))
        let client = Self.leavingRedirects

        let response = try await HTTPClientTransport(client: client).send(
            Self.post(server.url.appendingPathComponent("fetch"))
        )
        #expect(response.status == 302)
        #expect(server.received.count == 1 + HTTPClientTransport.maximumRedirects)
        #expect(server.received.allSatisfy { $0.headers["authorization"] == "Bearer vane_server_secret" })
        #expect(server.received.dropFirst().allSatisfy { $0.method == "GET" }, "a POST redirected by 302 becomes a GET")
    }

    @Test func aClientThatFollowsRedirectsItselfIsRefused() async throws {
        let other = try FaultProxy(upstream: Self.nowhere)
        defer { other.shutdown() }
        other.set(.respond(status: 200, headers: [:], body: "landed"))
        let first = try FaultProxy(upstream: Self.nowhere)
        defer { first.shutdown() }
        first.set(.respond(status: 302, headers: ["Location": other.url.absoluteString], body: ""))
        let client = Self.followingRedirects

        await #expect {
            try await HTTPClientTransport(client: client).send(Self.post(first.url))
        } throws: { error in
            guard case TransportError.cannotConnect(let reason) = error else { return false }
            return reason.contains("redirectConfiguration = .disallow")
        }
    }
}
