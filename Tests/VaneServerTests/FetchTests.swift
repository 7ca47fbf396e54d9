import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer

@Suite struct FetchTests {
    static let fetchPath = TestServer.demoPath + "/fetch"

    @Test(arguments: TestDatabase.allCases)
    func evaluatesTheContextWithMetadata(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let reply = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["randomizationId": "user-1", "device.country": "DE", "app.version": "2.1.0"]]
            )
            #expect(reply.status == .ok)
            #expect(reply.object?["state"] == "UPDATE")
            #expect(reply.object?["templateVersion"] == "1")
            let entries = try #require(reply.object?["entries"]?.objectValue)
            #expect(entries["banner_text"] == "Willkommen bei Vane!")
            #expect(entries["settings_layout"]?.stringValue?.contains("labs") == true)
            #expect(reply.object?["metadata"]?.objectValue?["payments_enabled"]?.objectValue?["realtime"] == true)
            // A client never sees conditions.
            #expect(!reply.text.contains("germany_austria"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func etagChangesOnlyWhenThisResultChanges(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let context: JSONValue = ["context": ["randomizationId": "user-1", "device.country": "us"]]
            let first = try await server.send(.post, Self.fetchPath, key: key, json: context)
            let etag = try #require(first.etag)
            let again = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: context,
                headers: [.ifNoneMatch: etag]
            )
            #expect(again.status == .notModified)
            #expect(again.etag == etag)
            let noChange = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["randomizationId": "user-1", "device.country": "us"], "etag": .string(etag)]
            )
            #expect(noChange.json == ["state": "NO_CHANGE", "templateVersion": "1"])

            // A publish that changes only the German banner leaves this US user's ETag alone.
            let template = try await server.send(.get, TestServer.demoPath + "/template")
            var updated = try #require(template.object)
            updated["version"] = nil
            let changed = JSONValue.object(updated).serialized().replacingOccurrences(
                of: "Willkommen bei Vane!",
                with: "Servus!"
            )
            #expect(
                try await server.send(.put, TestServer.demoPath + "/template", text: changed, headers: [.ifMatch: "*"])
                    .status == .ok
            )
            let american = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: context,
                headers: [.ifNoneMatch: etag]
            )
            #expect(american.status == .notModified)
            let german = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["device.country": "de"]]
            )
            #expect(german.object?["entries"]?.objectValue?["banner_text"] == "Servus!")
            #expect(german.object?["templateVersion"] == "2")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func malformedRequestsGetPreciseErrors(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let truncated = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                text: #"{"context": {"randomizationId": "#
            )
            #expect(truncated.status == .badRequest)
            #expect(truncated.errorMessage?.contains("line 1") == true)
            let nested = try await server.send(.post, Self.fetchPath, key: key, json: ["context": ["nested": ["a": 1]]])
            #expect(nested.status == .badRequest)
            let details = nested.object?["error"]?.objectValue?["details"]?.arrayValue
            #expect(details?.first?.objectValue?["path"] == "context.nested")
            #expect(
                try await server.send(.post, Self.fetchPath, key: key, json: ["context": "user"]).status == .badRequest
            )
            #expect(try await server.send(.post, Self.fetchPath, key: key, text: "[]").status == .badRequest)
            let huge = "{\"context\": {\"a\": \"" + String(repeating: "x", count: 70_000) + "\"}}"
            #expect(try await server.send(.post, Self.fetchPath, key: key, text: huge).status == .contentTooLarge)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func rateLimitAnswers429WithRetryAfter(database: TestDatabase) async throws {
        let oneRequestPerSecond: (inout ServerConfiguration) -> Void = { $0.rateLimit = 1 }
        try await TestServer.run(database, configure: oneRequestPerSecond) { server in
            let key = try await server.createKey(role: "client")
            var limited: TestServer.Reply?
            for _ in 0..<5 {
                let reply = try await server.send(.post, Self.fetchPath, key: key, json: [:])
                if reply.status == .tooManyRequests {
                    limited = reply
                    break
                }
            }
            let reply = try #require(limited)
            #expect(reply.errorStatus == "RESOURCE_EXHAUSTED")
            #expect(Int(reply.headers[.retryAfter] ?? "") ?? 0 >= 1)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func environmentWithoutTemplateSaysSo(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(
                try await server.send(.post, "/v1/projects/demo/environments", json: ["id": "qa"]).status == .created
            )
            let key = try await server.createKey(role: "client", environment: "qa")
            let reply = try await server.send(.post, "/v1/projects/demo/environments/qa/fetch", key: key, json: [:])
            #expect(reply.json == ["state": "NO_TEMPLATE", "entries": [:], "templateVersion": "0"])
        }
    }
}
