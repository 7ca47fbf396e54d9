import Foundation
import HTTPTypes
import Hummingbird
import TestSupport
import Testing

@testable import VaneServer
@testable import VaneServerCore

/// The event stream's fan-out under a subscriber that stops reading.
@Suite(.timeLimit(.minutes(5))) struct StreamFanOutTests {
    @Test func aSubscriberThatStopsReadingStallsNeitherPublishersNorOthers() async throws {
        let quiet: (inout ServerConfiguration) -> Void = { $0.streamHeartbeatSeconds = 600 }
        try await TestServer.run(.sqlite, configure: quiet) { server in
            let key = try await server.createKey(role: "client")
            let port = try #require(server.client.port)
            let request =
                "GET \(TestServer.demoPath)/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer \(key)\r\nAccept: text/event-stream\r\n\r\n"
            // A receive buffer of 1 KB: the kernel soon stops taking the server's writes.
            let stuck = try RawSocket(port: port, receiveBuffer: 1024)
            try stuck.send(request)
            let healthy = try RawSocket(port: port)
            try healthy.send(request)
            #expect(await stuck.read(timeout: 10) { $0.contains("id: 1\n") }.contains("id: 1\n"))
            #expect(await healthy.read(timeout: 10) { $0.contains("id: 1\n") }.contains("id: 1\n"))

            // The stuck client reads nothing more while 200,000 versions go out.
            let last: Int64 = 200_000
            let healthyReader = Task.detached { await healthy.read(timeout: 60) { $0.contains("id: \(last)\n") } }
            let environment = EnvironmentKey(projectId: "demo", environmentId: "production")
            for version in 2...last { server.application.events.published(environment, version: version) }
            #expect(await healthyReader.value.contains("id: \(last)\n"), "the reading client gets the newest version")

            let resumed = await stuck.read(timeout: 60) { $0.contains("id: \(last)\n") }
            #expect(resumed.contains("id: \(last)\n"), "a client that reads again gets the newest version")
            let delivered = resumed.components(separatedBy: "event: version").count - 1
            #expect(
                delivered < 10_000,
                "its buffer is bounded, so most stale events were dropped: \(delivered) arrived"
            )
        }
    }

    @Test func closedConnectionsAreForgotten() async throws {
        let brisk: (inout ServerConfiguration) -> Void = { $0.streamHeartbeatSeconds = 0.2 }
        try await TestServer.run(.sqlite, configure: brisk) { server in
            let hub = server.application.streamHub
            try await Self.openThreeStreamsAndDropThem(server)
            #expect(hub.openStreams == 0, "a dead client's stream is dropped by the next heartbeat at the latest")
        }
    }

    /// The hub hears a connection close without writing to it: no heartbeat is due for ten
    /// minutes here, so only the connection's own end can drop these streams in time.
    @Test func aStreamEndsWhenItsClientGoesAwayWithoutWaitingForAWrite() async throws {
        let quiet: (inout ServerConfiguration) -> Void = { $0.streamHeartbeatSeconds = 600 }
        try await TestServer.run(.sqlite, configure: quiet) { server in
            let port = try #require(server.client.port)
            let hub = server.application.streamHub
            let key = try await Self.openThreeStreamsAndDropThem(server)
            #expect(hub.openStreams == 0, "a closed connection ends its stream at once")
            // The node still serves streams afterwards.
            let again = try RawSocket(port: port)
            try again.send(
                "GET \(TestServer.demoPath)/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n\r\n"
            )
            #expect(await again.read(timeout: 10) { $0.contains("id: 1\n") }.contains("id: 1\n"))
        }
    }

    /// Event-stream requests, and only they, are answered from a task of their own, so that their
    /// connection's task keeps no frame of the middleware chain while the stream lasts.
    @Test func onlyEventStreamRequestsAreAnsweredFromATaskOfTheirOwn() {
        func opensStream(_ method: HTTPRequest.Method, _ path: String) -> Bool {
            let head = HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: path)
            return StreamRequestResponder<ServerResponder>.opensStream(
                Request(head: head, body: RequestBody(buffer: ByteBuffer()))
            )
        }
        #expect(opensStream(.get, TestServer.demoPath + "/stream"))
        #expect(opensStream(.get, TestServer.demoPath + "/stream?x=1"))
        #expect(opensStream(.get, "/ofrep/v1/events?token=abc"))
        #expect(!opensStream(.post, TestServer.demoPath + "/fetch"))
        #expect(!opensStream(.post, TestServer.demoPath + "/stream"))
        #expect(!opensStream(.get, TestServer.demoPath + "/template"))
        #expect(!opensStream(.get, "/console/stream"))
    }

    /// Opens three streams, sees each get the current version, then closes their sockets without
    /// a word, like clients that died, and waits (up to 10 s) for the hub to forget them; the
    /// client key they used.
    @discardableResult
    static func openThreeStreamsAndDropThem(_ server: TestServer) async throws -> String {
        let key = try await server.createKey(role: "client")
        let port = try #require(server.client.port)
        let hub = server.application.streamHub
        var sockets: [RawSocket] = []
        for _ in 0..<3 {
            let socket = try RawSocket(port: port)
            try socket.send(
                "GET \(TestServer.demoPath)/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n\r\n"
            )
            #expect(await socket.read(timeout: 10) { $0.contains("id: 1\n") }.contains("id: 1\n"))
            sockets.append(socket)
        }
        #expect(hub.openStreams == 3)
        sockets.removeAll()
        let deadline = Date().addingTimeInterval(10)
        while hub.openStreams > 0 && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        return key
    }
}
