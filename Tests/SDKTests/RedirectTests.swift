import Foundation
import Testing

@testable import Vane

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A redirect never carries the key to another origin (issue #13): real servers on loopback, the
/// second on another port, record what reached them.
@Suite struct RedirectTests {
    static let credentials = [
        "Authorization": "Bearer vane_client_secret",
        "X-API-Key": "vane_client_secret",
        "X-Trace": "kept",
    ]

    static func get(_ url: URL, _ path: String) -> TransportRequest {
        TransportRequest(method: "GET", url: url.appendingPathComponent(path), headers: credentials, timeout: 10)
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectWithinTheOriginKeepsTheKey(_ kind: TransportKind) async throws {
        let server = try LoopbackHTTPServer { request in
            request.path == "/start" ? .respond(status: 302, headers: ["Location": "/landing"]) : .respond(status: 200)
        }
        defer { server.stop() }
        let response = try await kind.make().send(Self.get(server.url, "start"))
        #expect(response.status == 200)
        let landing = try #require(server.seen.requests.first { $0.path == "/landing" })
        #expect(landing.headers["authorization"] == "Bearer vane_client_secret")
        #expect(landing.headers["x-api-key"] == "vane_client_secret")
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectToAnotherOriginDropsTheKey(_ kind: TransportKind) async throws {
        let other = try LoopbackHTTPServer { _ in .respond(status: 200, body: "landed") }
        defer { other.stop() }
        let target = other.url.appendingPathComponent("landing").absoluteString
        let server = try LoopbackHTTPServer { _ in .respond(status: 302, headers: ["Location": target]) }
        defer { server.stop() }
        let response = try await kind.make().send(Self.get(server.url, "start"))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "landed")
        #expect(server.seen.requests.first?.headers["authorization"] == "Bearer vane_client_secret")
        let landing = try #require(other.seen.requests.first)
        #expect(landing.path == "/landing")
        #expect(landing.headers["authorization"] == nil)
        #expect(landing.headers["x-api-key"] == nil)
        #expect(landing.headers["x-trace"] == "kept", "only credentials are dropped")
    }

    @Test(arguments: TransportKind.allCases)
    func aChainThatLeavesTheOriginDoesNotEarnTheKeyBack(_ kind: TransportKind) async throws {
        let origin = LockedValue<URL?>(nil)
        let other = try LoopbackHTTPServer { _ in
            let back = origin.withLockedValue { $0 }?.appendingPathComponent("landing").absoluteString ?? ""
            return .respond(status: 302, headers: ["Location": back])
        }
        defer { other.stop() }
        let bounce = other.url.appendingPathComponent("bounce").absoluteString
        let server = try LoopbackHTTPServer { request in
            request.path == "/start" ? .respond(status: 302, headers: ["Location": bounce]) : .respond(status: 200)
        }
        defer { server.stop() }
        origin.withLockedValue { $0 = server.url }
        let response = try await kind.make().send(Self.get(server.url, "start"))
        #expect(response.status == 200)
        let landing = try #require(server.seen.requests.first { $0.path == "/landing" })
        #expect(landing.headers["authorization"] == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func anEventStreamRedirectedToAnotherOriginDropsTheKey(_ kind: TransportKind) async throws {
        let other = try LoopbackHTTPServer { _ in
            .respond(status: 200, headers: ["Content-Type": "text/event-stream"], body: "data: hello\n\n")
        }
        defer { other.stop() }
        let target = other.url.appendingPathComponent("stream").absoluteString
        let server = try LoopbackHTTPServer { _ in .respond(status: 307, headers: ["Location": target]) }
        defer { server.stop() }
        let stream = try await kind.make().openStream(Self.get(server.url, "stream"))
        var body = Data()
        for try await chunk in stream.body { body += chunk }
        #expect(stream.status == 200)
        #expect(String(decoding: body, as: UTF8.self) == "data: hello\n\n")
        let landing = try #require(other.seen.requests.first)
        #expect(landing.headers["authorization"] == nil)
    }

    @Test func aFetchRedirectedToAnotherOriginSendsNoKey() async throws {
        let other = try LoopbackHTTPServer { _ in .respond(status: 200, body: #"{"state":"NO_TEMPLATE","entries":{}}"#)
        }
        defer { other.stop() }
        let target = other.url.absoluteString
        let server = try LoopbackHTTPServer { request in
            .respond(status: 307, headers: ["Location": target + request.path])
        }
        defer { server.stop() }
        let client = VaneClient(
            configuration: VaneClient.Configuration(
                serverURL: server.url,
                project: "app",
                environment: "prod",
                clientKey: "vane_client_secret",
                storage: .inMemory
            )
        )
        _ = try await client.fetch(minimumInterval: 0)
        let landing = try #require(other.seen.requests.first)
        #expect(landing.method == "POST")
        #expect(landing.path == "/v1/projects/app/environments/prod/fetch")
        #expect(landing.headers["authorization"] == nil)
        #expect(server.seen.requests.first?.headers["authorization"] == "Bearer vane_client_secret")
    }

    // MARK: - The rule, for what loopback cannot show

    static func rule(_ proposed: String, original: String, current: String? = nil) throws -> URLRequest? {
        var request = URLRequest(url: try #require(URL(string: proposed)))
        for (name, value) in credentials { request.setValue(value, forHTTPHeaderField: name) }
        return RedirectRule.request(
            following: request,
            original: URL(string: original),
            current: URL(string: current ?? original)
        )
    }

    @Test func httpsIsNeverRedirectedToHTTP() throws {
        #expect(try Self.rule("http://flags.example.com/v1", original: "https://flags.example.com/v1") == nil)
        #expect(
            try Self.rule("http://a.example/x", original: "https://flags.example.com", current: "https://a.example")
                == nil
        )
    }

    @Test(arguments: [
        ("https://flags.example.com:443/other", "https://flags.example.com/v1"),
        ("https://FLAGS.example.com/other", "https://flags.example.com/v1"),
        ("http://127.0.0.1:8080/b", "http://127.0.0.1:8080/a"),
    ])
    func theSameOriginKeepsTheKey(_ proposed: String, _ original: String) throws {
        let followed = try #require(try Self.rule(proposed, original: original))
        #expect(followed.value(forHTTPHeaderField: "Authorization") == "Bearer vane_client_secret")
    }

    @Test(arguments: [
        ("https://evil.example.com/v1", "https://flags.example.com/v1"),
        ("https://flags.example.com:8443/v1", "https://flags.example.com/v1"),
        ("https://flags.example.com/v1", "http://flags.example.com/v1"),
        ("http://localhost:8080/v1", "http://127.0.0.1:8080/v1"),
    ])
    func anotherOriginLosesEveryCredential(_ proposed: String, _ original: String) throws {
        let followed = try #require(try Self.rule(proposed, original: original))
        #expect(followed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(followed.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(followed.value(forHTTPHeaderField: "X-Trace") == "kept")
    }
}
