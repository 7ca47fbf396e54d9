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

    /// Refusals on the fixed path are the router's: the same answers, counted as errors of fetch's
    /// route, and a revoked key is refused at once.
    @Test(arguments: TestDatabase.allCases)
    func aRefusedFetchAnswersAndCountsAsTheRoutersRouteDoes(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let body: JSONValue = ["context": ["randomizationId": "user-1"]]
            let path = TestServer.demoPath + "/fetch"
            let before = try await Self.count(
                server,
                "hb_request_errors",
                route: Self.fetchRoute,
                label: "error_type=\"401\""
            )
            var answers: [TestServer.Reply] = []
            for fetchPath in [path, path + "/"] {
                let unknown = try await server.send(.post, fetchPath, key: "vane_client_unknown", json: body)
                #expect(unknown.status == .unauthorized)
                #expect(unknown.headers[.wwwAuthenticate] == "Bearer")
                answers.append(unknown)
            }
            #expect(answers[0].text == answers[1].text, "the fixed path answers as the router")
            #expect(answers[0].text.contains("unknown or revoked"))
            let after = try await Self.count(
                server,
                "hb_request_errors",
                route: Self.fetchRoute,
                label: "error_type=\"401\""
            )
            #expect(after >= before + 2, "both refusals are counted under fetch's route")

            let badBody = try await server.send(.post, path, key: key, text: "{\"context\": 5}")
            let routedBadBody = try await server.send(.post, path + "/", key: key, text: "{\"context\": 5}")
            #expect(badBody.status == .badRequest)
            #expect(badBody.text == routedBadBody.text)

            let stored = try #require(await server.application.keys.authenticate(secret: key))
            #expect(try await server.send(.post, path, key: key, json: body).status == .ok)
            #expect(try await server.send(.delete, "/v1/keys/\(stored.id)").status == .noContent)
            let revoked = try await server.send(.post, path, key: key, json: body)
            #expect(revoked.status == .unauthorized, "a revoked key is refused at once")
        }
    }

    /// The value of the counter `name` of fetch's route whose line also has `label`, as `/metrics`
    /// renders it (summed over the test process's registry).
    static func count(_ server: TestServer, _ name: String, route: String, label: String) async throws -> Double {
        let metrics = try await server.send(.get, "/metrics", key: nil)
        return metrics.text.split(separator: "\n").filter { line in
            line.hasPrefix(name + "{") && line.contains("http_route=\"\(route)\"") && line.contains(label)
        }
        .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        .reduce(0, +)
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
