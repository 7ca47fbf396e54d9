import Foundation
import TestSupport
import Testing

/// `GET …/stream` on a real `vane serve` process.
@Suite(.serialized, .timeLimit(.minutes(5))) struct EventStreamTests {
    static let path = "/v1/projects/demo/environments/production/stream"

    func url(_ server: ServeProcess) throws -> URL {
        try #require(URL(string: server.url + Self.path))
    }

    func publish(_ server: ServeProcess, _ value: String) async throws {
        let file = try CLIRunner.temporaryFile(#"{"parameters": {"a": {"defaultValue": {"value": "\#(value)"}}}}"#)
        #expect(try await server.run(["publish", file, "--force"]).status == 0)
    }

    @Test func aPublishReachesOpenStreamsWithItsVersion() async throws {
        let server = try await ServeProcess.start(arguments: ["--stream-heartbeat", "60"])
        defer { server.stop() }
        let key = try #require(server.demoClientKey)
        let stream = EventStreamClient(url: try url(server), key: key)
        defer { stream.close() }
        #expect(
            stream.wait { $0.contains("id: 1\nevent: version\ndata: {\"templateVersion\":\"1\"}\n\n") },
            "\(stream.text)"
        )
        #expect(stream.status == 200)
        #expect(stream.text.hasPrefix("retry: 3000\n\n"))
        try await publish(server, "two")
        #expect(
            stream.wait { $0.contains("id: 2\nevent: version\ndata: {\"templateVersion\":\"2\"}\n\n") },
            "\(stream.text)"
        )
        let rollback = try await server.run(["rollback", "1"])
        #expect(rollback.status == 0, "\(rollback.stderr)")
        #expect(stream.wait { $0.contains("id: 3\nevent: version") }, "a rollback is a new version too")
    }

    @Test func lastEventIdResumesWithoutRepeatingAndCatchesUp() async throws {
        let server = try await ServeProcess.start(arguments: ["--stream-heartbeat", "0.2"])
        defer { server.stop() }
        let key = try #require(server.demoClientKey)
        let upToDate = EventStreamClient(url: try url(server), key: key, lastEventId: "1")
        let behind = EventStreamClient(url: try url(server), key: key, lastEventId: "0")
        defer {
            upToDate.close()
            behind.close()
        }
        #expect(behind.wait { $0.contains("id: 1\n") }, "a client that missed version 1 gets it at once")
        #expect(upToDate.wait { $0.contains(": heartbeat\n\n") }, "heartbeats keep idle connections alive")
        #expect(!upToDate.text.contains("id: 1\n"), "nothing the client already has")
        try await publish(server, "two")
        #expect(upToDate.wait { $0.contains("id: 2\n") })
    }

    @Test func aWrongKeyIsRefused() async throws {
        let server = try await ServeProcess.start()
        defer { server.stop() }
        let stream = EventStreamClient(url: try url(server), key: "vane_client_wrong")
        defer { stream.close() }
        #expect(stream.wait { _ in stream.finished })
        #expect(stream.status == 401)
    }

    @Test func openStreamsDoNotHoldUpAGracefulShutdown() async throws {
        let server = try await ServeProcess.start(arguments: ["--stream-heartbeat", "60"])
        let key = try #require(server.demoClientKey)
        let streams = (0..<3).map { _ in
            EventStreamClient(url: (try? url(server)) ?? URL(fileURLWithPath: "/"), key: key)
        }
        defer {
            for stream in streams { stream.close() }
        }
        for stream in streams { #expect(stream.wait { $0.contains("id: 1\n") }) }
        let started = Date()
        #expect(server.stop(timeout: 20) == 0, "SIGTERM ends the streams and exits cleanly: \(server.log)")
        #expect(Date().timeIntervalSince(started) < 15, "streams end at shutdown instead of holding it up")
        for stream in streams { #expect(stream.wait { _ in stream.finished }) }
    }
}
