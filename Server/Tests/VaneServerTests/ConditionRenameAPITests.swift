import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `POST …/conditions/{name}/rename`: the console editor's rename rule through the admin API.
@Suite struct ConditionRenameAPITests {
    static let conditions = TestServer.demoPath + "/conditions/"

    @Test(arguments: TestDatabase.allCases)
    func aRenameCarriesEveryConditionalValueAlong(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let reply = try await server.send(
                .post,
                Self.conditions + "germany_austria/rename",
                json: ["name": "dach"],
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(reply.etag == "etag-demo-production-2")
            let template = try #require(reply.object)
            let names = template["conditions"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } ?? []
            #expect(names.contains("dach") && !names.contains("germany_austria"))
            let banner = template["parameters"]?.objectValue?["banner_text"]?.objectValue
            #expect(banner?["conditionalValues"]?.objectValue?["dach"] != nil, "\(reply.text)")
            #expect(template["version"]?.objectValue?["description"] == "Rename condition germany_austria to dach")
            let fetched = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                json: ["context": ["randomizationId": "u", "device.country": "at"]]
            )
            #expect(fetched.object?["entries"]?.objectValue?["banner_text"] == "Willkommen bei Vane!")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func refusalsSayWhatIsWrongAndPublishNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let cases: [(String, JSONValue, HTTPFields, HTTPResponse.Status, String)] = [
                ("missing", ["name": "x"], [:], .notFound, "no condition \"missing\""),
                ("germany_austria", ["name": "new_app_versions"], [:], .badRequest, "names must be unique"),
                ("germany_austria", ["name": ""], [:], .badRequest, "\"name\" is required"),
                ("germany_austria", ["name": "a\nb"], [:], .badRequest, "control characters"),
                ("germany_austria", [:], [:], .badRequest, "name"),
                (
                    "germany_austria", ["name": "dach"], [.ifMatch: "etag-demo-production-9"], .preconditionFailed,
                    "version 1 is live, not 9"
                ),
            ]
            for (name, body, headers, status, message) in cases {
                let path = Self.conditions + name + "/rename"
                let reply = try await server.send(.post, path, json: body, headers: headers)
                #expect(reply.status == status, "\(name) \(body): \(reply.text)")
                #expect(reply.errorMessage?.contains(message) == true, "\(reply.text)")
            }
            let client = try await server.createKey(role: "client")
            let denied = try await server.send(
                .post,
                Self.conditions + "germany_austria/rename",
                key: client,
                json: ["name": "dach"]
            )
            #expect(denied.status == .forbidden)
            let template = try await server.send(.get, TestServer.demoPath + "/template")
            #expect(template.etag == "etag-demo-production-1")
        }
    }
}
