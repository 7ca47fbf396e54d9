import Foundation
import TestSupport
import Testing
import VaneCore

@testable import VaneServer

/// Idle and slow connections cannot pile up (issue #13: an idle socket and a request head trickled
/// a byte at a time were both still open after two minutes). The connection cap and open streams
/// are tested against a real `vane serve` in CLITests' ConnectionCapTests: HummingbirdTesting's
/// live server drops the cap from the configuration.
@Suite(.timeLimit(.minutes(5))) struct ConnectionLimitsTests {
    static func short(_ configuration: inout ServerConfiguration) {
        configuration.idleTimeoutSeconds = 1
    }

    @Test func anIdleConnectionIsClosed() async throws {
        try await TestServer.run(.sqlite, configure: Self.short) { server in
            let socket = try RawSocket(port: try #require(server.client.port))
            #expect(
                await socket.waitForClose(timeout: 10),
                "a socket that never sends is closed after the idle timeout"
            )
        }
    }

    @Test func aRequestHeadTrickledAByteAtATimeIsClosed() async throws {
        try await TestServer.run(.sqlite, configure: Self.short) { server in
            let socket = try RawSocket(port: try #require(server.client.port))
            #expect(socket.trySend("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "))
            var closedAfter: Int?
            for second in 0..<40 {
                // One byte every quarter second: the head never completes.
                guard socket.trySend("a") else {
                    closedAfter = second
                    break
                }
                if await socket.waitForClose(timeout: 0.25) {
                    closedAfter = second
                    break
                }
            }
            #expect(closedAfter != nil, "the trickled head was still open after 10 s")
        }
    }

    /// A response that outlasts the idle timeout (an event stream) is not cut; once it ends, the
    /// connection is idle again and a client that keeps it open without a request is closed.
    @Test func aConnectionIsIdleAgainOnceALongResponseEnds() async throws {
        try await TestServer.run(.sqlite, configure: Self.short) { server in
            let (stream, keyId) = try await server.openStreamOfNewClientKey()
            // Twice the idle timeout: the stream is still open.
            try await Task.sleep(for: .seconds(2))
            // On a connection of its own: the test client's kept-alive one has timed out by now.
            let revoke = try RawSocket(port: try #require(server.client.port))
            try revoke.send(
                "DELETE /v1/keys/\(keyId) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer \(TestServer.adminKey)\r\nConnection: close\r\n\r\n"
            )
            let revoked = await revoke.read(timeout: 10) { $0.contains("\r\n\r\n") }
            #expect(revoked.hasPrefix("HTTP/1.1 204"), "\(revoked)")
            let end = await stream.read(timeout: 10) { $0.contains(StreamCredentialTests.end) }
            #expect(end.contains(StreamCredentialTests.end), "the stream outlived the idle timeout and ended: \(end)")
            #expect(
                await stream.waitForClose(timeout: 10),
                "the connection was still open 10 s after its stream ended"
            )
        }
    }

    @Test func aRequestBodyThatStopsIsClosed() async throws {
        try await TestServer.run(.sqlite, configure: Self.short) { server in
            let socket = try RawSocket(port: try #require(server.client.port))
            try socket.send(
                // Authorized, so the route is waiting for the body when it stops.
                "POST /v1/projects/demo/environments/production/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer \(TestServer.adminKey)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"events\": ["
            )
            #expect(
                await socket.waitForClose(timeout: 10),
                "a request whose body stopped arriving was still open after 10 s"
            )
        }
    }
}
