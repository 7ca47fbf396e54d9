import Foundation
import HTTPTypes
import Testing
import VaneCore

/// Rolling back one flag (the live template with that flag as an older version had it) with a
/// reason, through the API: what is published, what is recorded, and what refuses it.
@Suite struct FlagRollbackTests {
    /// Version 2: `banner` with a German value under `germany`, and `other`.
    static let good: JSONValue = [
        "conditions": [["name": "germany", "expression": "device.country in ['de']"]],
        "parameters": [
            "banner": [
                "defaultValue": ["value": "Hello"],
                "conditionalValues": ["germany": ["value": "Hallo"]],
            ],
            "other": ["defaultValue": ["value": "a"]],
        ],
    ]

    /// Version 3: `banner` broken, `germany` gone with it, and `other` changed too.
    static let broken: JSONValue = [
        "conditions": [["name": "ios", "expression": "device.os == 'ios'"]],
        "parameters": [
            "banner": [
                "defaultValue": ["value": "Broken"],
                "conditionalValues": ["ios": ["value": "Broken on iOS"]],
            ],
            "other": ["defaultValue": ["value": "b"]],
        ],
    ]

    static let rollback = TestServer.demoPath + "/rollback"

    @Test(arguments: TestDatabase.allCases)
    func oneFlagComesBackWithTheConditionsItNeedsAndTheReasonIsRecorded(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await server.publish(Self.good)  // 2
            try await server.publish(Self.broken)  // 3
            let reply = try await server.send(
                .post,
                Self.rollback,
                json: ["versionNumber": "2", "flag": "banner", "reason": "the banner broke checkout"]
            )
            #expect(reply.status == .ok, "\(reply.text)")
            let template = try #require(reply.object)
            let parameters = try #require(template["parameters"]?.objectValue)
            #expect(parameters["banner"] == Self.good.objectValue?["parameters"]?.objectValue?["banner"])
            #expect(parameters["other"]?.objectValue?["defaultValue"] == ["value": "b"], "other flags stay live")
            #expect(
                template["conditions"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } == [
                    "ios", "germany",
                ],
                "the condition banner needs is appended; live's stay in place"
            )
            let version = try #require(template["version"]?.objectValue)
            #expect(version["versionNumber"] == "4")
            #expect(version["updateType"] == "ROLLBACK")
            #expect(version["rollbackSource"] == "2")
            #expect(version["description"] == "Rollback of banner to version 2: the banner broke checkout")

            let audit = try await server.send(.get, TestServer.demoPath + "/audit")
            let newest = try #require(audit.object?["entries"]?.arrayValue?.first?.objectValue)
            #expect(newest["action"] == "template.rollback")
            #expect(newest["details"]?.objectValue?["reason"] == "the banner broke checkout")
            #expect(newest["details"]?.objectValue?["flag"] == "banner")
            #expect(
                newest["summary"]?.stringValue
                    == "rolled back banner to version 2 as version 4: the banner broke checkout"
            )

            // The diff the API offers says the same in sentences.
            let diff = try await server.send(.get, TestServer.demoPath + "/diff?from=3&to=4")
            let summary = diff.object?["summary"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(summary.contains("banner: for everyone else, 'Hello' instead of 'Broken'"), "\(summary)")
            #expect(summary.contains("banner: for germany, 'Hallo' instead of none"), "\(summary)")
            #expect(summary.contains("condition germany: added at position 2, matching device.country in ['de']"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aFlagTheOldVersionLackedIsRemovedAndNothingToRestoreIsRefused(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await server.publish(["parameters": ["other": ["defaultValue": ["value": "a"]]]])  // 2
            try await server.publish(Self.broken)  // 3
            let removed = try await server.send(.post, Self.rollback, json: ["versionNumber": "2", "flag": "banner"])
            #expect(removed.status == .ok, "\(removed.text)")
            #expect(removed.object?["parameters"]?.objectValue?.keys == ["other"])
            #expect(removed.object?["version"]?.objectValue?["description"] == "Rollback of banner to version 2")

            // `other` is "b" live (version 4) and "a" in version 2, but a flag in neither is refused,
            // and so is one that is already as it was.
            let missing = try await server.send(.post, Self.rollback, json: ["versionNumber": "2", "flag": "nowhere"])
            #expect(missing.status == .badRequest)
            #expect(missing.text.contains("nowhere"), "\(missing.text)")
            let same = try await server.send(.post, Self.rollback, json: ["versionNumber": "3", "flag": "other"])
            #expect(same.status == .badRequest, "\(same.text)")
            #expect(same.text.contains("nothing to roll back"))
            let versions = try await server.send(.get, TestServer.demoPath + "/versions")
            #expect(versions.object?["versions"]?.arrayValue?.count == 4, "refusals publish nothing")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aOneFlagRollbackNeedsPublishingRightsAndFollowsTheChangePolicy(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await server.publish(Self.good)  // 2
            try await server.publish(Self.broken)  // 3
            let body: JSONValue = ["versionNumber": "2", "flag": "banner", "reason": "broken"]
            let reader = try await server.createKey(role: "server")
            #expect(try await server.send(.post, Self.rollback, key: reader, json: body).status == .forbidden)
            try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
            let refused = try await server.send(.post, Self.rollback, json: body)
            #expect(refused.status == .conflict, "\(refused.text)")
            #expect(try await ChangeRequestTests.liveVersion(server) == "3")
        }
    }
}
