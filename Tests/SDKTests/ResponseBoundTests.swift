import Foundation
import Testing
import Vane

/// A response over the limit is refused while it arrives, not after (issue #13): a real server on
/// loopback sends 64 MiB, and must find the client gone long before it is done.
@Suite struct ResponseBoundTests {
    static let floodBytes = 64 * 1024 * 1024

    /// A head announcing the body's length, or none (the body ends when the connection closes).
    static func head(announcingLength: Bool, bodyBytes: Int = floodBytes) -> String {
        let length = announcingLength ? "\r\nContent-Length: \(bodyBytes)" : "\r\nConnection: close"
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json" + length
    }

    @Test(arguments: [true, false])
    func aFetchOverTheLimitStopsReceivingAndTheActiveValuesStay(announcingLength: Bool) async throws {
        let server = try LoopbackHTTPServer { _ in
            .flood(head: Self.head(announcingLength: announcingLength), bodyBytes: Self.floodBytes)
        }
        defer { server.stop() }
        var configuration = VaneClient.Configuration(
            serverURL: server.url,
            project: "app",
            environment: "prod",
            clientKey: "vane_client_secret",
            defaults: InAppDefaults(["banner": "offline"]),
            storage: .inMemory,
            transport: URLSessionTransport()
        )
        configuration.maximumResponseBytes = 1024
        let client = VaneClient(configuration: configuration)
        await #expect {
            try await client.fetch(minimumInterval: 0)
        } throws: { error in
            guard case VaneError.malformedResponse(let reason) = error else { return false }
            return reason.contains("1024 bytes (maximumResponseBytes)")
        }
        #expect(client.string(forKey: "banner", default: "") == "offline")
        await server.waitForFinished(1)
        #expect(server.seen.floodCutShort, "the client read all \(server.seen.floodedBytes) bytes")
    }

    @Test(arguments: TransportKind.allCases, [true, false])
    func theTransportRefusesABodyOverTheLimit(_ kind: TransportKind, announcingLength: Bool) async throws {
        let server = try LoopbackHTTPServer { _ in
            // A caller's session receives the body whole before it is checked: keep it small.
            .flood(head: Self.head(announcingLength: announcingLength, bodyBytes: 256 * 1024), bodyBytes: 256 * 1024)
        }
        defer { server.stop() }
        let request = TransportRequest(method: "GET", url: server.url, timeout: 10, maximumResponseBytes: 1000)
        await #expect(throws: TransportError.responseTooLarge(limit: 1000)) {
            try await kind.make().send(request)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyAtTheLimitArrives(_ kind: TransportKind) async throws {
        let body = String(repeating: "y", count: 1000)
        let server = try LoopbackHTTPServer { _ in .respond(status: 200, body: body) }
        defer { server.stop() }
        let request = TransportRequest(method: "GET", url: server.url, timeout: 10, maximumResponseBytes: 1000)
        let response = try await kind.make().send(request)
        #expect(response.body == Data(body.utf8))
    }

    @Test(arguments: [true, false])
    func aStreamOverItsLimitEnds(announcingLength: Bool) async throws {
        let server = try LoopbackHTTPServer { _ in
            .flood(head: Self.head(announcingLength: announcingLength), bodyBytes: Self.floodBytes)
        }
        defer { server.stop() }
        let request = TransportRequest(method: "GET", url: server.url, timeout: 10, maximumResponseBytes: 4096)
        await #expect(throws: TransportError.responseTooLarge(limit: 4096)) {
            let stream = try await URLSessionTransport().openStream(request)
            for try await _ in stream.body {}
        }
        await server.waitForFinished(1)
        #expect(server.seen.floodCutShort, "the client read all \(server.seen.floodedBytes) bytes")
    }
}
