import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The audit log tells the story: each entry's message, the flag keys it changed and its kind,
/// filtered by flag key on the server, in the API and the console alike.
@Suite(.timeLimit(.minutes(5))) struct AuditTrailTests {
    static let audit = TestServer.demoPath + "/audit"

    /// Throws the production kill switch of `payments_enabled` off with `message`.
    static func switchOff(_ server: TestServer, message: String) async throws {
        let reply = try await server.send(
            .post,
            FlagSwitchAPITests.switchPath,
            json: ["to": "off", "message": .string(message)]
        )
        #expect(reply.status == .ok)
    }

    @Test(arguments: TestDatabase.allCases)
    func aPublishIsAuditedWithItsMessageFlagsAndKindAndFiltersByFlag(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.switchOff(server, message: "payment provider outage")
            // Another publish that changes only the banner.
            let current = try await server.send(.get, TestServer.demoPath + "/template")
            let text = current.text.replacingOccurrences(of: "Welcome to Vane!", with: "Hello from Vane!")
            guard case .object(var object)? = try? JSONValue.parse(text) else {
                Issue.record("the template is not a JSON object")
                return
            }
            object["version"] = ["description": "new banner"]
            let published = try await server.publish(.object(object))
            #expect(published.status == .ok)

            let all = try await server.send(.get, Self.audit)
            let entries = try #require(all.object?["entries"]?.arrayValue)
            let newest = try #require(entries.first?.objectValue)
            #expect(newest["kind"]?.stringValue == "publish")
            #expect(newest["message"]?.stringValue == "new banner")
            #expect(newest["flags"] == ["banner_text"])

            let filtered = try await server.send(.get, Self.audit + "?flag=payments_enabled")
            #expect(filtered.status == .ok)
            let switchEntries = try #require(filtered.object?["entries"]?.arrayValue)
            // The kill switch, and the first publish that created the flag; never the banner's.
            #expect(switchEntries.count == 2)
            let kill = try #require(switchEntries.first?.objectValue)
            #expect(kill["kind"]?.stringValue == "kill_switch")
            #expect(kill["action"]?.stringValue == "template.publish")
            #expect(kill["message"]?.stringValue == "payment provider outage")
            #expect(kill["flags"] == ["payments_enabled"])
            #expect(
                switchEntries.allSatisfy {
                    $0.objectValue?["flags"]?.arrayValue?.contains(.string("payments_enabled")) == true
                }
            )
            // Exact keys: a prefix or a LIKE pattern matches nothing.
            for other in ["payments", "payments_%", "%"] {
                let none = try await server.send(
                    .get,
                    Self.audit + "?flag=" + ConsolePaths.encodeQueryValue(other)
                )
                #expect(none.object?["entries"]?.arrayValue == [], "flag=\(other)")
            }
            // The instance-wide log filters the same way.
            let instance = try await server.send(.get, "/v1/audit?flag=banner_text")
            #expect(
                instance.object?["entries"]?.arrayValue?.first?.objectValue?["message"]?.stringValue == "new banner"
            )
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theConsoleLogShowsKindMessageFlagsAndTheDiffFilteredByFlag(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.switchOff(server, message: "payment provider outage")
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await ConsoleTests.request(
                server,
                .get,
                "/audit?flag=payments_enabled",
                cookie: viewer.cookie
            )
            #expect(page.status == .ok)
            #expect(page.text.contains("<span class=\"tag\">Kill switch</span>"))
            #expect(page.text.contains("<q class=\"audit-message\">payment provider outage</q>"))
            #expect(page.text.contains("href=\"/projects/demo/environments/production/flags/payments_enabled/edit\""))
            // Version 1 created the flags, version 2 is the kill switch: each links to its diff.
            #expect(page.text.contains("href=\"/projects/demo/environments/production/diff?from=1&amp;to=2\""))
            #expect(page.text.contains("id=\"flag\" name=\"flag\" type=\"text\" value=\"payments_enabled\""))
            // Filtered on the server: no entry about anything else (keys, projects) is listed.
            #expect(!page.text.contains("created environment"))
            let unfiltered = try await ConsoleTests.request(server, .get, "/audit", cookie: viewer.cookie)
            #expect(unfiltered.text.contains("created environment"))
        }
    }

    @Test func everyActionHasAKindAndPublishesSayHowTheyWereMade() {
        #expect(AuditKind(action: "template.rollback", details: [:]) == .rollback)
        #expect(AuditKind(action: "template.publish", details: ["kind": "kill_switch"]) == .killSwitch)
        #expect(AuditKind(action: "experiment.start", details: [:]) == .experiment)
        #expect(AuditKind(action: "change_request.apply", details: [:]) == .changeRequest)
        #expect(AuditKind(action: "user.create", details: [:]) == .person)
        #expect(AuditKind(action: "environment.update", details: [:]) == .environment)
        #expect(
            AuditKind.ofPublish(rollbackSource: nil, authorization: .request("r1"), change: nil) == .changeRequest
        )
        #expect(
            AuditKind.ofPublish(
                rollbackSource: nil,
                authorization: .killSwitch,
                change: .killSwitch(flag: "f", position: "off")
            ) == .killSwitch
        )
        #expect(AuditKind.ofPublish(rollbackSource: 3, authorization: .direct("x"), change: nil) == .rollback)
        #expect(AuditKind.ofPublish(rollbackSource: nil, authorization: .direct("x"), change: nil) == .publish)
    }
}
