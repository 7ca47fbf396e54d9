import Foundation
import Testing
import VaneCore

@testable import VaneServer

/// Fetch is matched by its fixed path before the router (``ServerResponder``); it must answer
/// exactly as the router's route does.
@Suite(.timeLimit(.minutes(5))) struct ServerResponderTests {
    static let fetchRoute = "/v1/projects/{project}/environments/{environment}/fetch"

    @Test func theFetchPathsShapeIsMatchedAndNothingElse() {
        let match = FetchPath.match("/v1/projects/shop/environments/prod%2Feu/fetch")
        #expect(match?.projectId == "shop")
        #expect(match?.environmentId == "prod%2Feu", "segments stay as written, as the router's parameters")
        for other in [
            "/v1/projects/shop/environments/prod/fetch/", "/v1/projects//environments/prod/fetch",
            "/v1/projects/shop/environments//fetch", "/v1/projects/shop/environments/prod/fetchx",
            "/v1/projects/shop/environments/prod/events", "/v1/projects/shop/environments/prod",
            "/v1/projects/shop/prod/fetch", "/v1/projects/shop/environments/prod/x/fetch",
            "//v1/projects/shop/environments/prod/fetch", "/v2/projects/shop/environments/prod/fetch", "/", "",
        ] {
            #expect(FetchPath.match(other) == nil, "\(other)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aFetchAnswersAsTheRoutersRouteDoes(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let body: JSONValue = ["context": ["randomizationId": "user-1", "device.country": "de"]]
            let path = TestServer.demoPath + "/fetch"
            let fetched = try await server.send(.post, path, key: key, json: body)
            #expect(fetched.status == .ok)
            // A trailing slash is not the fixed shape: the router answers it, the same way.
            let routed = try await server.send(.post, path + "/", key: key, json: body)
            #expect(routed.status == .ok)
            #expect(routed.etag == fetched.etag)
            #expect(routed.text == fetched.text)
            // The middleware runs: no key, no values; a key of another environment, 403.
            #expect(try await server.send(.post, path, key: nil, json: body).status == .unauthorized)
            let other = try await server.send(
                .post,
                "/v1/projects/demo/environments/staging/fetch",
                key: key,
                json: body
            )
            #expect(other.status == .forbidden)
            // Other methods are the router's, as before.
            #expect(try await server.send(.get, path, key: key).status == .notFound)

            // Metrics name the route as the router does, not "Unknown".
            let before = try await Self.requestCount(server, status: 304)
            let again = try await server.send(
                .post,
                path,
                key: key,
                json: body,
                headers: [.ifNoneMatch: try #require(fetched.etag)]
            )
            #expect(again.status == .notModified)
            #expect(try await Self.requestCount(server, status: 304) > before)
        }
    }

    /// The `hb_requests` counter of fetch's route with `status`, as `/metrics` renders it (the test
    /// process's registry: other tests' fetches count too, so only an increase tells).
    static func requestCount(_ server: TestServer, status: Int) async throws -> Double {
        let metrics = try await server.send(.get, "/metrics", key: nil)
        return metrics.text.split(separator: "\n").filter { line in
            line.hasPrefix("hb_requests") && line.contains("http_route=\"\(fetchRoute)\"")
                && line.contains("http_response_status_code=\"\(status)\"")
        }
        .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        .reduce(0, +)
    }
}
