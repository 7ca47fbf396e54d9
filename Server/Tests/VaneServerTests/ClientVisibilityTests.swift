import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// What a client key may decide and learn (issue #13): it cannot move the clock unless the
/// template allows it, and it learns descriptions only where the template says so.
@Suite(.timeLimit(.minutes(5))) struct ClientVisibilityTests {
    /// A launch at 2030-01-01: `phase` is `before` until then, `after` from then on.
    static func launchTemplate(settings: JSONValue? = nil) -> JSONValue {
        var template: JSONObject = [
            "conditions": [["name": "launched", "expression": "dateTime >= dateTime('2030-01-01T00:00:00', 'UTC')"]],
            "parameters": [
                "phase": [
                    "defaultValue": ["value": "before"],
                    "conditionalValues": ["launched": ["value": "after"]],
                    "description": "Internal: flips at the 2030 keynote; do not leak.",
                    "vane": ["title": "Launch phase"],
                ]
            ],
        ]
        if let settings { template["vane"] = settings }
        return .object(template)
    }

    /// A client that claims it is 2031.
    static let timeTraveller: JSONValue = [
        "context": ["randomizationId": "u1", "dateTime": "2031-06-01T00:00:00Z"]
    ]

    static let now = Date(timeIntervalSince1970: 1_800_000_000)  // 2027

    static func entries(_ outcome: FetchOutcome) throws -> JSONObject {
        guard case .update(_, let body) = outcome else { throw TestSetupError("expected UPDATE, got \(outcome)") }
        return try JSONValue.parse(body.readableBytesView).objectValue?["entries"]?.objectValue ?? [:]
    }

    static func fetch(_ template: JSONValue) throws -> JSONObject {
        try entries(
            FetchResponder.respond(
                body: Array(timeTraveller.serialized().utf8),
                ifNoneMatch: TagList(fieldValues: []),
                now: now,
                served: FetchResponderTests.served(template, version: 1)
            )
        )
    }

    @Test func aClientCannotPinTheClockUnlessTheTemplateAllowsIt() throws {
        #expect(try Self.fetch(Self.launchTemplate())["phase"] == "before", "the server's clock decides")
        let allowed = Self.launchTemplate(settings: ["clientsMayPinDateTime": true])
        #expect(try Self.fetch(allowed)["phase"] == "after", "a QA environment may travel in time")
    }

    @Test(arguments: TestDatabase.allCases)
    func fetchAndOFREPIgnoreAPinnedClockByDefault(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(try await server.publish(Self.launchTemplate()).status == .ok)
            let key = try await server.createKey(role: "client")
            let fetched = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                key: key,
                json: Self.timeTraveller
            )
            #expect(fetched.object?["entries"]?.objectValue?["phase"] == "before", "\(fetched.text)")
            let ofrep = try await server.send(
                .post,
                "/ofrep/v1/evaluate/flags/phase",
                key: key,
                json: ["context": ["targetingKey": "u1", "dateTime": "2031-06-01T00:00:00Z"]]
            )
            #expect(ofrep.object?["value"] == "before", "\(ofrep.text)")

            let allowed = Self.launchTemplate(settings: ["clientsMayPinDateTime": true])
            #expect(try await server.publish(allowed).status == .ok)
            let pinned = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                key: key,
                json: Self.timeTraveller
            )
            #expect(pinned.object?["entries"]?.objectValue?["phase"] == "after", "\(pinned.text)")
        }
    }

    @Test func descriptionsReachClientsOnlyWhenTheTemplateSaysSo() async throws {
        try await TestServer.run(.sqlite) { server in
            #expect(try await server.publish(Self.launchTemplate()).status == .ok)
            let key = try await server.createKey(role: "client")
            let fetched = try await server.send(.post, TestServer.demoPath + "/fetch", key: key, json: [:])
            let metadata = try #require(
                fetched.object?["metadata"]?.objectValue?["phase"]?.objectValue,
                "\(fetched.text)"
            )
            #expect(metadata["title"] == "Launch phase")
            #expect(metadata["description"] == nil)
            #expect(!fetched.text.contains("keynote"), "\(fetched.text)")
            let ofrep = try await server.send(.post, "/ofrep/v1/evaluate/flags", key: key, json: [:])
            #expect(!ofrep.text.contains("keynote"), "\(ofrep.text)")
            #expect(!ofrep.text.contains("launched"), "no condition name in OFREP: \(ofrep.text)")

            let opted = Self.launchTemplate(settings: ["clientsReceiveDescriptions": true])
            #expect(try await server.publish(opted).status == .ok)
            let described = try await server.send(.post, TestServer.demoPath + "/fetch", key: key, json: [:])
            #expect(
                described.object?["metadata"]?.objectValue?["phase"]?.objectValue?["description"]
                    == "Internal: flips at the 2030 keynote; do not leak."
            )
        }
    }

    @Test func aSettingOfTheWrongTypeIsRefusedWithItsPath() async throws {
        try await TestServer.run(.sqlite) { server in
            let reply = try await server.publish(Self.launchTemplate(settings: ["clientsMayPinDateTime": "yes"]))
            #expect(reply.status == .badRequest)
            #expect(reply.text.contains("vane.clientsMayPinDateTime"), "\(reply.text)")
        }
    }
}
