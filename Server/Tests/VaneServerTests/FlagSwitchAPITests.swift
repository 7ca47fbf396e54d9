import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `POST …/flags/{key}/switch`: the console's kill switch through the admin API, on both databases.
@Suite struct FlagSwitchAPITests {
    static let switchPath = TestServer.demoPath + "/flags/payments_enabled/switch"

    /// The default value of `payments_enabled` in the live template, and the live version.
    static func live(_ server: TestServer) async throws -> (value: String?, version: String?, description: String?) {
        let template = try await server.send(.get, TestServer.demoPath + "/template").object
        let flag = template?["parameters"]?.objectValue?["payments_enabled"]?.objectValue
        let version = template?["version"]?.objectValue
        return (
            flag?["defaultValue"]?.objectValue?["value"]?.stringValue,
            version?["versionNumber"]?.stringValue,
            version?["description"]?.stringValue
        )
    }

    /// The actions of the environment's audit entries.
    static func auditActions(_ server: TestServer) async throws -> [String] {
        let audit = try await server.send(.get, TestServer.demoPath + "/audit")
        return (audit.object?["entries"]?.arrayValue ?? []).compactMap { $0.objectValue?["action"]?.stringValue }
    }

    @Test(arguments: TestDatabase.allCases)
    func offPublishesFalseForEveryoneAndOnBringsTheFlagBack(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let preview = try await server.send(
                .post,
                Self.switchPath + "?validateOnly=true",
                json: ["to": "off"]
            )
            #expect(preview.status == .ok, "\(preview.text)")
            #expect(preview.object?["published"] == .bool(false))
            #expect(preview.object?["versionNumber"] == "1")
            let change = preview.object?["changes"]?.arrayValue?.first?.objectValue
            #expect(change?["condition"] == nil)
            #expect(change?["before"] == ["value": "true"])
            #expect(change?["after"] == ["value": "false"])
            #expect(try await Self.live(server).version == "1", "a preview publishes nothing")

            let off = try await server.send(.post, Self.switchPath, json: ["to": "off", "message": "outage"])
            #expect(off.status == .ok, "\(off.text)")
            #expect(off.object?["published"] == .bool(true))
            #expect(off.object?["versionNumber"] == "2")
            #expect(off.object?["realtime"] == .bool(true))
            #expect(off.etag == "etag-demo-production-2")
            let afterOff = try await Self.live(server)
            #expect(afterOff.value == "false")
            #expect(afterOff.description == "outage")

            // Off again changes nothing and publishes nothing: a retried call is harmless.
            let again = try await server.send(.post, Self.switchPath, json: ["to": "off", "message": "retry"])
            #expect(again.status == .ok)
            #expect(again.object?["published"] == .bool(false))
            #expect(again.object?["versionNumber"] == "2")

            let on = try await server.send(
                .post,
                Self.switchPath,
                json: ["to": "on", "message": "fixed"],
                headers: [.ifMatch: try #require(off.etag)]
            )
            #expect(on.status == .ok, "\(on.text)")
            #expect(on.object?["versionNumber"] == "3")
            #expect(try await Self.live(server).value == "true")

            let audit = try await server.send(.get, TestServer.demoPath + "/audit")
            let entries = audit.object?["entries"]?.arrayValue ?? []
            #expect(entries.filter { $0.objectValue?["action"] == "template.publish" }.count >= 2)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func refusalsSayWhatIsWrongAndChangeNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let flags = TestServer.demoPath + "/flags/"
            let cases: [(String, JSONValue, HTTPFields, HTTPResponse.Status, String)] = [
                ("banner_text", ["to": "off", "message": "m"], [:], .badRequest, "only Boolean flags have"),
                ("missing", ["to": "off", "message": "m"], [:], .notFound, "version 1 has no flag \"missing\""),
                ("payments_enabled", ["to": "sideways", "message": "m"], [:], .badRequest, "\"on\" or \"off\""),
                ("payments_enabled", ["to": "off"], [:], .badRequest, "say why"),
                ("payments_enabled", ["to": "off", "message": "  "], [:], .badRequest, "say why"),
                (
                    "payments_enabled", ["to": "off", "message": "m"], [.ifMatch: "etag-demo-production-7"],
                    .preconditionFailed, "version 1 is live, not 7"
                ),
            ]
            for (flag, body, headers, status, message) in cases {
                let reply = try await server.send(.post, flags + flag + "/switch", json: body, headers: headers)
                #expect(reply.status == status, "\(flag) \(body): \(reply.text)")
                #expect(reply.errorMessage?.contains(message) == true, "\(reply.text)")
            }
            let nowhere = try await server.send(
                .post,
                "/v1/projects/demo/environments/nowhere/flags/payments_enabled/switch",
                json: ["to": "off", "message": "m"]
            )
            #expect(nowhere.status == .notFound)

            let client = try await server.createKey(role: "client")
            let denied = try await server.send(
                .post,
                Self.switchPath,
                key: client,
                json: ["to": "off", "message": "m"]
            )
            #expect(denied.status == .forbidden)
            #expect(try await Self.live(server).version == "1")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aBurstWithOneIfMatchPublishesOnceAndRefusesTheRest(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let auditBefore = try await Self.auditActions(server)
            let burst = 8
            // A connection each: one connection would answer one request after another.
            let replies = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for _ in 0..<burst {
                    group.addTask {
                        let reply = try await server.sendOnItsOwnConnection(
                            .post,
                            Self.switchPath,
                            json: ["to": "off", "message": "burst"],
                            headers: [.ifMatch: "etag-demo-production-1"]
                        )
                        return (reply.status, reply.text)
                    }
                }
                var all: [(HTTPResponse.Status, String)] = []
                for try await reply in group { all.append(reply) }
                return all
            }
            let published = replies.filter { $0.0 == .ok }
            #expect(published.count == 1, "\(replies)")
            #expect(replies.filter { $0.0 == .preconditionFailed }.count == burst - 1, "\(replies)")
            let winner = try JSONValue.parse(try #require(published.first).1).objectValue
            #expect(winner?["published"] == .bool(true))
            #expect(winner?["versionNumber"] == "2")
            let live = try await Self.live(server)
            #expect(live.version == "2", "one new version, not one per request")
            #expect(live.value == "false")
            let audit = try await Self.auditActions(server)
            #expect(audit.count == auditBefore.count + 1, "one audit entry for one publish: \(audit)")
            #expect(audit.first == "template.publish", "newest first: \(audit)")
        }
    }
}
