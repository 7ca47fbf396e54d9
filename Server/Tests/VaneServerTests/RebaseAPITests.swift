import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `POST …/template/rebase`: the console's per-field merge and conflict choices through the admin API.
@Suite struct RebaseAPITests {
    static let rebase = TestServer.demoPath + "/template/rebase"

    /// The live template with banner_text changed by `edit`.
    static func banner(_ template: JSONObject, _ edit: (inout JSONObject) -> Void) -> JSONValue {
        var template = template
        template["version"] = nil
        var parameters = template["parameters"]?.objectValue ?? JSONObject()
        var banner = parameters["banner_text"]?.objectValue ?? JSONObject()
        edit(&banner)
        parameters["banner_text"] = .object(banner)
        template["parameters"] = .object(parameters)
        return .object(template)
    }

    /// Version 1 as the demo starts, and version 2 with banner_text's default changed by someone else.
    static func publishTheirDefault(_ server: TestServer) async throws -> JSONObject {
        let first = try #require(try await server.send(.get, TestServer.demoPath + "/template").object)
        let theirs = banner(first) { $0["defaultValue"] = ["value": "Their welcome"] }
        let published = try await server.send(
            .put,
            TestServer.demoPath + "/template",
            json: theirs,
            headers: [.ifMatch: "etag-demo-production-1"]
        )
        #expect(published.status == .ok, "\(published.text)")
        return first
    }

    static func bannerField(_ reply: TestServer.Reply, _ field: String) -> JSONValue? {
        reply.object?["template"]?.objectValue?["parameters"]?.objectValue?["banner_text"]?.objectValue?[field]
    }

    @Test(arguments: TestDatabase.allCases)
    func differentFieldsOfOneFlagMergeAndTheSameFieldConflicts(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let first = try await Self.publishTheirDefault(server)

            // Mine changed the description only: it merges with their new default.
            let described = Self.banner(first) { $0["description"] = "My description" }
            let merged = try await server.send(.post, Self.rebase, json: ["baseVersion": 1, "template": described])
            #expect(merged.status == .ok, "\(merged.text)")
            #expect(merged.etag == "etag-demo-production-2")
            #expect(merged.object?["liveVersion"] == "2")
            #expect(Self.bannerField(merged, "defaultValue") == ["value": "Their welcome"])
            #expect(Self.bannerField(merged, "description") == "My description")
            #expect(merged.object?["reverts"] == [])

            // Mine changed the default too: a conflict on that field alone, with the three sides.
            let mine = Self.banner(first) {
                $0["defaultValue"] = ["value": "My welcome"]
                $0["description"] = "My description"
            }
            let conflict = try await server.send(.post, Self.rebase, json: ["baseVersion": "1", "template": mine])
            #expect(conflict.status == .conflict, "\(conflict.text)")
            #expect(
                conflict.object?["conflicts"] == [
                    [
                        "kind": "parameter", "name": "banner_text", "field": "defaultValue",
                        "base": "\"Welcome to Vane!\"", "mine": "\"My welcome\"", "theirs": "\"Their welcome\"",
                    ]
                ]
            )

            // Keeping mine reverts their change, and says so.
            let choice: JSONValue = ["kind": "parameter", "name": "banner_text", "field": "defaultValue"]
            func choosing(_ members: JSONObject) -> JSONValue {
                var object = choice.objectValue ?? JSONObject()
                for member in members.members { object[member.key] = member.value }
                return ["baseVersion": 1, "template": mine, "choices": [.object(object)]]
            }
            let kept = try await server.send(.post, Self.rebase, json: choosing(["take": "mine"]))
            #expect(kept.status == .ok, "\(kept.text)")
            #expect(Self.bannerField(kept, "defaultValue") == ["value": "My welcome"])
            #expect(Self.bannerField(kept, "description") == "My description")
            let revert = kept.object?["reverts"]?.arrayValue?.first?.objectValue
            #expect(revert?["field"] == "defaultValue")
            #expect(revert?["theirs"] == "\"Their welcome\"")
            #expect(revert?["result"] == "\"My welcome\"")
            #expect(
                revert?["message"]
                    == "reverts live change: banner_text defaultValue \"Welcome to Vane!\" → \"Their welcome\" (becomes \"My welcome\")"
            )

            // Taking theirs reverts nothing; a value of one's own takes its place.
            let taken = try await server.send(.post, Self.rebase, json: choosing(["take": "theirs"]))
            #expect(Self.bannerField(taken, "defaultValue") == ["value": "Their welcome"])
            #expect(taken.object?["reverts"] == [])
            let given = try await server.send(.post, Self.rebase, json: choosing(["value": "Both welcome"]))
            #expect(given.status == .ok, "\(given.text)")
            #expect(Self.bannerField(given, "defaultValue") == ["value": "Both welcome"])

            // Nothing was published.
            let live = try await server.send(.get, TestServer.demoPath + "/template")
            #expect(live.etag == "etag-demo-production-2")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func refusalsSayWhatIsWrong(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let first = try await Self.publishTheirDefault(server)
            let mine = Self.banner(first) { $0["defaultValue"] = ["value": "My welcome"] }
            let cases: [(JSONValue, HTTPResponse.Status, String)] = [
                (["template": mine], .badRequest, "\"baseVersion\" is required"),
                (["baseVersion": 3, "template": mine], .badRequest, "base version 3 is after the live version 2"),
                (["baseVersion": 1], .badRequest, "\"template\" is required"),
                (["baseVersion": 1, "template": ["parameters": 3]], .badRequest, "the template cannot be read"),
                (["baseVersion": 1, "template": mine, "choices": "mine"], .badRequest, "\"choices\" must be an array"),
                (
                    [
                        "baseVersion": 1, "template": mine,
                        "choices": [
                            ["kind": "parameter", "name": "banner_text", "field": "description", "take": "mine"]
                        ],
                    ],
                    .badRequest, "there is no conflict on banner_text description"
                ),
                (
                    [
                        "baseVersion": 1, "template": mine,
                        "choices": [["kind": "parameter", "name": "banner_text", "field": "defaultValue", "value": 3]],
                    ],
                    .badRequest, "defaultValue takes a string"
                ),
                (
                    [
                        "baseVersion": 1, "template": mine,
                        "choices": [["kind": "flag", "name": "banner_text", "field": "defaultValue", "take": "mine"]],
                    ],
                    .badRequest, "choices[0].kind must be parameter, condition, conditionOrder or settings"
                ),
                (
                    [
                        "baseVersion": 1, "template": mine,
                        "choices": [["kind": "parameter", "name": "banner_text", "field": "defaultValue"]],
                    ],
                    .badRequest, "choices[0] needs either \"take\""
                ),
            ]
            for (body, status, message) in cases {
                let reply = try await server.send(.post, Self.rebase, json: body)
                #expect(reply.status == status, "\(body): \(reply.text)")
                #expect(reply.errorMessage?.contains(message) == true, "\(message): \(reply.text)")
            }
            // Removing a flag that was changed since is a conflict on its "removed" field.
            let emptied = try await server.send(.post, Self.rebase, json: ["baseVersion": 1, "template": [:]])
            #expect(emptied.status == .conflict, "\(emptied.text)")
            let removed = emptied.object?["conflicts"]?.arrayValue?.compactMap { $0.objectValue }
            #expect(removed?.map { $0["name"] } == ["banner_text"])
            #expect(removed?.first?["field"] == "removed")
            #expect(removed?.first?["mine"] == .null)
            let unknown = try await server.send(
                .post,
                "/v1/projects/demo/environments/nowhere/template/rebase",
                json: ["baseVersion": 0, "template": mine]
            )
            #expect(unknown.status == .notFound)
            let client = try await server.createKey(role: "client")
            let denied = try await server.send(
                .post,
                Self.rebase,
                key: client,
                json: ["baseVersion": 1, "template": mine]
            )
            #expect(denied.status == .forbidden)
        }
    }
}
