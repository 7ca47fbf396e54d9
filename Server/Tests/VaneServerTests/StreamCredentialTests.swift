import Foundation
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// An event stream lives no longer than the credential that opened it (issue #13: streams kept
/// running after their key was revoked or their token expired).
@Suite(.timeLimit(.minutes(5))) struct StreamCredentialTests {
    /// The end of a chunked response: the stream was closed by the server.
    static let end = "0\r\n\r\n"

    static func quickHeartbeat(_ configuration: inout ServerConfiguration) {
        configuration.streamHeartbeatSeconds = 0.2
    }

    @Test func revokingAKeyEndsItsStreamsAtOnce() async throws {
        try await TestServer.run(.sqlite) { server in
            let (stream, keyId) = try await server.openStreamOfNewClientKey()
            let revoked = try await server.send(.delete, "/v1/keys/\(keyId)")
            #expect(revoked.status == .noContent, "\(revoked.text)")
            let rest = await stream.read(timeout: 10) { $0.contains(Self.end) }
            #expect(rest.contains(Self.end), "the stream ended: \(rest)")
            #expect(server.application.streamHub.openStreams == 0)
        }
    }

    /// A stream is one request to the metrics: counted and timed under its route when it ends
    /// (its body is written until then), as every other request is when its body is written.
    @Test func anEndedStreamIsCountedUnderItsRoute() async throws {
        try await TestServer.run(.sqlite) { server in
            let route = "/v1/projects/{project}/environments/{environment}/stream"
            let answered = #"http_response_status_code="200""#
            // The registry is the test process's: other tests' streams count too, so only an
            // increase tells.
            let before = try await ServerResponderTests.count(server, "hb_requests", route: route, label: answered)
            let (stream, keyId) = try await server.openStreamOfNewClientKey()
            #expect(try await server.send(.delete, "/v1/keys/\(keyId)").status == .noContent)
            #expect(await stream.read(timeout: 10) { $0.contains(Self.end) }.contains(Self.end))
            var after = before
            for _ in 0..<100 where after == before {
                try await Task.sleep(for: .milliseconds(50))
                after = try await ServerResponderTests.count(server, "hb_requests", route: route, label: answered)
            }
            #expect(after > before, "the ended stream was counted under \(route)")
        }
    }

    @Test func aKeyRevokedOnAnotherNodeEndsItsStreamsAtTheNextHeartbeat() async throws {
        try await TestServer.run(.sqlite, configure: Self.quickHeartbeat) { server in
            let (stream, keyId) = try await server.openStreamOfNewClientKey()
            // What this node's key index learns when another node revokes the key.
            server.application.keys.revoke(id: keyId)
            let rest = await stream.read(timeout: 10) { $0.contains(Self.end) }
            #expect(rest.contains(Self.end), "the stream ended: \(rest)")
        }
    }

    @Test func anOFREPStreamEndsWhenItsTokenExpires() async throws {
        try await TestServer.run(.sqlite, configure: Self.quickHeartbeat) { server in
            let key = try await server.createKey(role: "client")
            let authenticated = try #require(await server.application.keys.authenticate(secret: key))
            let (stored, _) = try #require(server.application.keys.key(id: authenticated.id))
            let production = EnvironmentKey(projectId: "demo", environmentId: "production")
            let expiry = Int64(Date().timeIntervalSince1970) + 2
            let token = StreamToken.make(
                keyId: stored.id,
                environment: production,
                expiry: expiry,
                secret: server.application.secret
            )
            let stream = try server.openEventStream("/ofrep/v1/events?token=\(token)")
            #expect(await stream.read(timeout: 10) { $0.contains("retry: ") }.hasPrefix("HTTP/1.1 200"))
            let rest = await stream.read(timeout: 15) { $0.contains(Self.end) }
            #expect(rest.contains(Self.end), "the stream ended when its token expired: \(rest)")
        }
    }

    /// No subscription outlives its connection: clients that reset before the response head is
    /// written, or while the stream is open, leave the node with no open streams.
    @Test func abruptDisconnectsLeaveNoSubscriptionBehind() async throws {
        try await TestServer.run(.sqlite, configure: Self.quickHeartbeat) { server in
            let key = try await server.createKey(role: "client")
            for round in 0..<100 {
                let stream = try server.openEventStream(TestServer.demoPath + "/stream", key: key)
                if round.isMultiple(of: 2) {
                    // Before the response head, most likely.
                    stream.reset()
                } else {
                    _ = await stream.read(timeout: 10) { $0.contains("retry: ") }
                    stream.reset()
                }
            }
            var open = server.application.streamHub.openStreams
            for _ in 0..<100 where open > 0 {
                try await Task.sleep(nanoseconds: 100_000_000)
                open = server.application.streamHub.openStreams
            }
            #expect(open == 0, "subscriptions left behind")
        }
    }
}
