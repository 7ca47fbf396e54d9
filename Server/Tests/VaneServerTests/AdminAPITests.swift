import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

@Suite(.timeLimit(.minutes(5))) struct AdminAPITests {
    @Test(arguments: TestDatabase.allCases)
    func projectsAndEnvironments(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let created = try await server.send(.post, "/v1/projects", json: ["id": "shop", "name": "Shop"])
            #expect(created.status == .created)
            #expect(created.object?["id"] == "shop")
            #expect(try await server.send(.post, "/v1/projects", json: ["id": "shop"]).status == .conflict)
            #expect(try await server.send(.post, "/v1/projects", json: ["id": "Bad Id"]).status == .badRequest)
            #expect(try await server.send(.post, "/v1/projects", json: ["name": "no id"]).status == .badRequest)
            #expect(try await server.send(.post, "/v1/projects", text: "{not json").status == .badRequest)

            #expect(
                try await server.send(.post, "/v1/projects/shop/environments", json: ["id": "qa"]).status == .created
            )
            #expect(
                try await server.send(.post, "/v1/projects/nope/environments", json: ["id": "qa"]).status == .notFound
            )
            let environments = try await server.send(.get, "/v1/projects/shop/environments")
            #expect(environments.object?["environments"]?.arrayValue?.first?.objectValue?["templateVersion"] == "0")
            let projects = try await server.send(.get, "/v1/projects")
            #expect(
                projects.object?["projects"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue } == [
                    "demo", "shop",
                ]
            )

            // An environment with nothing published serves an empty template with version 0.
            let empty = try await server.send(.get, "/v1/projects/shop/environments/qa/template")
            #expect(empty.etag == "etag-shop-qa-0")
            #expect(empty.json == ["parameters": [:]])
            #expect(try await server.send(.get, "/v1/projects/shop/environments/nope/template").status == .notFound)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func keysAndRoles(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let client = try await server.createKey(role: "client", name: "ios")
            #expect(client.hasPrefix("vane_client_"))
            let list = try await server.send(.get, "/v1/keys")
            let keys = list.object?["keys"]?.arrayValue ?? []
            #expect(keys.contains { $0.objectValue?["name"] == "ios" })
            #expect(!list.text.contains(client))

            // Roles: a client key cannot administer, and is scoped to its environment.
            #expect(try await server.send(.get, "/v1/projects", key: client).status == .forbidden)
            #expect(
                try await server.send(.post, "/v1/projects/demo/environments/staging/fetch", key: client, json: [:])
                    .status == .forbidden
            )
            #expect(try await server.send(.get, "/v1/projects", key: nil).status == .unauthorized)
            let unknown = try await server.send(.get, "/v1/projects", key: "vane_admin_guess")
            #expect(unknown.status == .unauthorized)
            #expect(unknown.errorStatus == "UNAUTHENTICATED")

            // X-API-Key works like Authorization: Bearer.
            let viaHeader = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                key: nil,
                json: [:],
                headers: [APIKeyCredentials.apiKeyHeader!: client]
            )
            #expect(viaHeader.status == .ok)

            #expect(
                try await server.send(.post, "/v1/keys", json: ["name": "x", "role": "client"]).status == .badRequest
            )
            #expect(
                try await server.send(.post, "/v1/keys", json: ["name": "x", "role": "root"]).status == .badRequest
            )

            // Revoked keys stop working at once.
            let id = try #require(keys.first { $0.objectValue?["name"] == "ios" }?.objectValue?["id"]?.stringValue)
            #expect(try await server.send(.delete, "/v1/keys/\(id)").status == .noContent)
            #expect(
                try await server.send(.post, TestServer.demoPath + "/fetch", key: client, json: [:]).status
                    == .unauthorized
            )
            #expect(try await server.send(.delete, "/v1/keys/k_nothere").status == .notFound)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func auditLogRecordsWhoDidWhat(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await server.publish(["parameters": ["a": ["defaultValue": ["value": "1"]]]])
            let audit = try await server.send(.get, TestServer.demoPath + "/audit")
            let entries = audit.object?["entries"]?.arrayValue ?? []
            let newest = try #require(entries.first?.objectValue)
            #expect(newest["action"] == "template.publish")
            #expect(newest["actor"]?.objectValue?["name"] == "admin (--admin-key)")
            #expect(newest["details"]?.objectValue?["versionNumber"] == "2")
            let all = try await server.send(.get, "/v1/audit?pageSize=2")
            #expect(all.object?["entries"]?.arrayValue?.count == 2)
            let token = try #require(all.object?["nextPageToken"]?.stringValue)
            let next = try await server.send(.get, "/v1/audit?pageSize=2&pageToken=\(token)")
            #expect(next.status == .ok)
            func ids(_ page: JSONValue?) -> [String] {
                page?.objectValue?["entries"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue } ?? []
            }
            let firstIds = Set(ids(all.json))
            let nextIds = ids(next.json)
            #expect(!nextIds.isEmpty && firstIds.isDisjoint(with: nextIds))
            #expect(!all.text.contains(TestServer.adminKey))
            for path in ["/v1/audit?pageToken=garbage", TestServer.demoPath + "/versions?pageToken=garbage"] {
                let refused = try await server.send(.get, path)
                #expect(refused.status == .badRequest, "\(path)")
                #expect(refused.text.contains("not one this server returned"), "\(path)")
            }
        }
    }
}
