import HTTPTypes
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer

@Suite(.timeLimit(.minutes(5))) struct TemplateAPITests {
    static let template: JSONValue = [
        "conditions": [["name": "germany", "expression": "device.country in ['de']"]],
        "parameters": [
            "greeting": ["defaultValue": ["value": "Hello"], "conditionalValues": ["germany": ["value": "Hallo"]]],
            "limit": [
                "defaultValue": ["value": "10"], "valueType": "NUMBER", "vane": ["realtime": true, "title": "Limit"],
            ],
        ],
        "version": ["description": "first"],
    ]

    @Test(arguments: TestDatabase.allCases)
    func publishWithETagsLikeFirebase(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let path = TestServer.demoPath + "/template"
            let current = try await server.send(.get, path)
            #expect(current.status == .ok)
            #expect(current.etag == "etag-demo-production-1")

            // No If-Match: refused, with a message that says what to send.
            let missing = try await server.send(.put, path, json: Self.template)
            #expect(missing.status == .preconditionFailed)
            #expect(missing.errorMessage?.contains("If-Match") == true)

            let published = try await server.send(
                .put,
                path,
                json: Self.template,
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(published.status == .ok)
            #expect(published.etag == "etag-demo-production-2")
            let version = published.object?["version"]?.objectValue
            #expect(version?["versionNumber"] == "2")
            #expect(version?["updateType"] == "INCREMENTAL_UPDATE")
            #expect(version?["description"] == "first")
            #expect(version?["updateUser"]?.objectValue?["name"] == "admin (--admin-key)")

            // The ETag we published from is stale now.
            let stale = try await server.send(
                .put,
                path,
                json: Self.template,
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(stale.status == .preconditionFailed)
            #expect(stale.errorStatus == "FAILED_PRECONDITION")
            #expect(stale.errorMessage?.contains("current version is 2") == true)

            let forced = try await server.send(.put, path, json: Self.template, headers: [.ifMatch: "*"])
            #expect(forced.object?["version"]?.objectValue?["updateType"] == "FORCED_UPDATE")
            #expect(forced.etag == "etag-demo-production-3")

            // Quoted ETags are accepted too.
            let quoted = try await server.send(
                .put,
                path,
                json: Self.template,
                headers: [.ifMatch: "\"etag-demo-production-3\""]
            )
            #expect(quoted.status == .ok)

            let old = try await server.send(.get, path + "?versionNumber=2")
            #expect(old.etag == "etag-demo-production-2")
            #expect(old.object?["parameters"]?.objectValue?.keys == ["greeting", "limit"])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func invalidTemplatesListEveryProblemAndPublishNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let bad: JSONValue = [
                "conditions": [["name": "c", "expression": "device.os == ios"]],
                "parameters": [
                    "flag": ["defaultValue": ["value": "yes"], "valueType": "BOOLEAN"],
                    "db": ["defaultValue": ["value": "postgres://app:hunter22@db/prod"]],
                ],
            ]
            let reply = try await server.publish(bad)
            #expect(reply.status == .badRequest)
            #expect(reply.errorStatus == "INVALID_ARGUMENT")
            let details = reply.object?["error"]?.objectValue?["details"]?.arrayValue ?? []
            let paths = Set(details.compactMap { $0.objectValue?["path"]?.stringValue })
            // Warnings too: no parameter uses the condition `c` (conditions[0].name).
            #expect(
                paths == [
                    "conditions[0].expression", "conditions[0].name", "parameters.flag.defaultValue.value",
                    "parameters.db.defaultValue.value",
                ]
            )
            #expect(!reply.text.contains("hunter22"))
            #expect(try await server.send(.get, TestServer.demoPath + "/template").etag == "etag-demo-production-1")

            let malformed = try await server.send(
                .put,
                TestServer.demoPath + "/template",
                text: #"{"parameters": {"#,
                headers: [.ifMatch: "*"]
            )
            #expect(malformed.status == .badRequest)
            #expect(malformed.text.contains("line 1"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func validateOnlyStoresNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let reply = try await server.send(
                .put,
                TestServer.demoPath + "/template?validateOnly=true",
                json: Self.template,
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(reply.status == .ok)
            #expect(reply.etag == "etag-demo-production-1-0")
            #expect(reply.object?["version"] == nil, "nothing was published, so no version: \(reply.text)")
            let versions = try await server.send(.get, TestServer.demoPath + "/versions")
            #expect(versions.object?["versions"]?.arrayValue?.count == 1)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func versionsRollbackAndDiff(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await server.publish(Self.template)  // 2
            var changed = Self.template
            if case .object(var root) = changed, case .object(var parameters)? = root["parameters"] {
                parameters["greeting"] = ["defaultValue": ["value": "Hi"]]
                parameters["limit"] = nil
                parameters["extra"] = ["defaultValue": ["value": "x"]]
                root["parameters"] = .object(parameters)
                changed = .object(root)
            }
            try await server.publish(changed)  // 3

            let page = try await server.send(.get, TestServer.demoPath + "/versions?pageSize=2")
            let numbers = page.object?["versions"]?.arrayValue?.compactMap {
                $0.objectValue?["versionNumber"]?.stringValue
            }
            #expect(numbers == ["3", "2"])
            let token = try #require(page.object?["nextPageToken"]?.stringValue)
            let next = try await server.send(.get, TestServer.demoPath + "/versions?pageSize=2&pageToken=\(token)")
            #expect(
                next.object?["versions"]?.arrayValue?.compactMap { $0.objectValue?["versionNumber"]?.stringValue } == [
                    "1"
                ]
            )
            #expect(next.object?["nextPageToken"] == nil)

            let diff = try await server.send(.get, TestServer.demoPath + "/diff?from=2&to=3")
            #expect(
                diff.object?["parameters"]
                    == ["added": ["extra"], "removed": ["limit"], "changed": ["greeting"]]
            )

            let rollback = try await server.send(.post, TestServer.demoPath + "/rollback", json: ["versionNumber": "2"])
            #expect(rollback.status == .ok)
            let version = rollback.object?["version"]?.objectValue
            #expect(version?["versionNumber"] == "4")
            #expect(version?["updateType"] == "ROLLBACK")
            #expect(version?["rollbackSource"] == "2")
            #expect(rollback.object?["parameters"]?.objectValue?.keys == ["greeting", "limit"])

            #expect(
                try await server.send(.post, TestServer.demoPath + "/rollback", json: ["versionNumber": 9]).status
                    == .badRequest
            )
            #expect(try await server.send(.post, TestServer.demoPath + "/rollback", json: [:]).status == .badRequest)
            #expect(try await server.send(.get, TestServer.demoPath + "/diff?from=1&to=99").status == .notFound)
            #expect(
                try await server.send(.get, TestServer.demoPath + "/versions?startTime=yesterday").status == .badRequest
            )
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func defaultsInThreeFormats(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let json = try await server.send(.get, TestServer.demoPath + "/defaults?format=json")
            #expect(json.object?["banner_text"] == "Welcome to Vane!")
            #expect(json.object?["checkout_variant"] == "control")
            let plist = try await server.send(.get, TestServer.demoPath + "/defaults?format=plist")
            #expect(plist.text.contains("<key>banner_text</key>"))
            #expect(plist.text.contains("<string>Welcome to Vane!</string>"))
            let xml = try await server.send(.get, TestServer.demoPath + "/defaults?format=xml")
            #expect(xml.text.contains("<entry>\n        <key>payments_enabled</key>\n        <value>true</value>"))
            #expect(try await server.send(.get, TestServer.demoPath + "/defaults?format=yaml").status == .badRequest)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func compiledTemplateIsForServerKeysWithETag(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let serverKey = try await server.createKey(role: "server")
            let clientKey = try await server.createKey(role: "client")
            let compiled = try await server.send(.get, TestServer.demoPath + "/template/compiled", key: serverKey)
            #expect(compiled.status == .ok)
            #expect(compiled.object?["conditions"]?.arrayValue?.count == 3)
            let etag = try #require(compiled.etag)
            let unchanged = try await server.send(
                .get,
                TestServer.demoPath + "/template/compiled",
                key: serverKey,
                headers: [.ifNoneMatch: etag]
            )
            #expect(unchanged.status == .notModified)
            // A client key never sees conditions.
            let denied = try await server.send(.get, TestServer.demoPath + "/template/compiled", key: clientKey)
            #expect(denied.status == .forbidden)
            #expect(try await server.send(.get, TestServer.demoPath + "/template", key: clientKey).status == .forbidden)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func oversizedBodiesAreRefused(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let huge =
                "{\"parameters\": {\"a\": {\"defaultValue\": {\"value\": \"" + String(repeating: "x", count: 9 << 20)
                + "\"}}}}"
            let reply = try await server.send(
                .put,
                TestServer.demoPath + "/template",
                text: huge,
                headers: [.ifMatch: "*"]
            )
            #expect(reply.status == .contentTooLarge)
        }
    }
}
