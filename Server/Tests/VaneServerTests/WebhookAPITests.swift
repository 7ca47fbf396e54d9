import Foundation
import HTTPTypes
import SQLKit
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `…/projects/{project}/webhooks`: endpoints, the outbox written with each change, deliveries,
/// and the refusal of endpoints inside the server's own network (SSRF), on both databases.
/// Five minutes, as most suites: beside the whole suite on 2 cores its change-request cases take
/// 150–165 s of wall time (13 s alone), and three minutes cut them off in three full runs of six.
@Suite(.timeLimit(.minutes(5))) struct WebhookAPITests {
    static let path = "/v1/projects/demo/webhooks"
    /// Nothing listens on the discard port: every attempt fails at once.
    static let deadURL = "http://127.0.0.1:9/hook"

    /// Receivers on loopback are allowed; a failed attempt waits an hour, so the outbox stays put.
    static func allowingLoopback(_ configuration: inout ServerConfiguration) {
        configuration.webhooksAllowPrivateAddresses = true
        configuration.webhookRetrySeconds = 3600
    }

    @Test(arguments: TestDatabase.allCases)
    func anEndpointIsCreatedWithASecretShownOnceThenChangedRotatedAndDeleted(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: Self.allowingLoopback) { server in
            let created = try await server.send(
                .post,
                Self.path,
                json: ["url": .string(Self.deadURL), "description": "CI", "events": ["version.published"]]
            )
            #expect(created.status == .created, "\(created.text)")
            let endpoint = try #require(created.object)
            let id = try #require(endpoint["id"]?.stringValue)
            let secret = try #require(endpoint["secret"]?.stringValue)
            #expect(id.hasPrefix("ep_"))
            #expect(secret.hasPrefix("whsec_") && WebhookSignature.key(of: secret)?.count == 32)
            #expect(endpoint["events"] == ["version.published"])
            #expect(endpoint["enabled"] == .bool(true))

            let read = try await server.send(.get, Self.path + "/" + id)
            #expect(read.status == .ok)
            #expect(read.object?["secret"] == nil, "the secret is shown once")
            #expect(read.object?["url"] == .string(Self.deadURL))
            let listed = try await server.send(.get, Self.path)
            #expect(listed.object?["webhooks"]?.arrayValue?.count == 1)
            #expect(listed.text.contains(secret) == false)

            let changed = try await server.send(
                .patch,
                Self.path + "/" + id,
                json: ["enabled": false, "events": ["flag.kill_switch", "experiment.started"]]
            )
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(changed.object?["enabled"] == .bool(false))
            #expect(changed.object?["events"] == ["flag.kill_switch", "experiment.started"])
            #expect(changed.object?["description"] == "CI", "what the request leaves out stays")

            let rotated = try await server.send(.post, Self.path + "/" + id + "/rotate-secret", json: ["graceHours": 2])
            #expect(rotated.status == .ok, "\(rotated.text)")
            let newSecret = try #require(rotated.object?["secret"]?.stringValue)
            #expect(newSecret != secret && newSecret.hasPrefix("whsec_"))
            #expect(rotated.object?["previousSecretExpiry"]?.stringValue != nil)
            let stored = try await WebhookStore(engine: server.application.store.engine).endpoint(
                projectId: "demo",
                id: id
            )
            #expect(stored.signingSecrets(at: Clock.nowMilliseconds()) == [newSecret, secret])
            #expect(stored.signingSecrets(at: Clock.nowMilliseconds() + 3 * 3_600_000) == [newSecret])

            let audit = try await server.send(.get, "/v1/audit?action=webhook.rotate_secret")
            #expect(audit.object?["entries"]?.arrayValue?.count == 1, "\(audit.text)")
            #expect(audit.text.contains(newSecret) == false && audit.text.contains(secret) == false)

            #expect(try await server.send(.delete, Self.path + "/" + id).status == .noContent)
            let gone = try await server.send(.get, Self.path + "/" + id)
            #expect(gone.status == .notFound)
            #expect(gone.errorMessage?.contains("GET …/webhooks") == true)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func badRequestsSayWhatWasExpected(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: Self.allowingLoopback) { server in
            let cases: [(JSONValue, String)] = [
                (["events": ["version.published"]], "\"url\" is required"),
                (["url": "ftp://example.com/hook"], "must be an absolute http:// or https:// URL"),
                (["url": "hook"], "must be an absolute http:// or https:// URL"),
                (["url": .string(Self.deadURL), "events": []], "\"events\" must be a non-empty array"),
                (["url": .string(Self.deadURL), "events": ["version.deleted"]], "events[0] must be one of"),
                (["url": .string(Self.deadURL), "enabled": "yes"], "\"enabled\" must be true or false"),
            ]
            for (body, message) in cases {
                let reply = try await server.send(.post, Self.path, json: body)
                #expect(reply.status == .badRequest, "\(body)")
                #expect(reply.errorMessage?.contains(message) == true, "\(reply.text)")
            }
            let noProject = try await server.send(
                .post,
                "/v1/projects/nowhere/webhooks",
                json: ["url": .string(Self.deadURL)]
            )
            #expect(noProject.status == .notFound)
            #expect(try await server.send(.get, Self.path).object?["webhooks"] == [], "nothing was stored")

            let created = try await server.send(.post, Self.path, json: ["url": .string(Self.deadURL)])
            let id = try #require(created.object?["id"]?.stringValue)
            let grace = try await server.send(
                .post,
                Self.path + "/" + id + "/rotate-secret",
                json: ["graceHours": 1000]
            )
            #expect(grace.status == .badRequest)
            #expect(grace.errorMessage?.contains("\"graceHours\" must be from 0 to 168") == true, "\(grace.text)")
            let status = try await server.send(.get, Self.path + "/" + id + "/deliveries?status=lost")
            #expect(status.status == .badRequest)
            let unknown = try await server.send(.post, Self.path + "/" + id + "/deliveries/msg_nothing/redeliver")
            #expect(unknown.status == .notFound, "\(unknown.text)")
        }
    }

    /// Publish, rollback, kill switch, experiment start and stop each write their message in their
    /// own transaction; a refused publish writes none.
    /// A change request's life reaches the endpoints that asked for it: opened, approved and
    /// applied (with the version it published), then a second one opened, edited (opened again)
    /// and rejected; its comments and a draft tell nobody.
    @Test(arguments: TestDatabase.allCases)
    func aChangeRequestsLifeIsAnnounced(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: Self.allowingLoopback) { server in
            let events: JSONValue = [
                "change_request.opened", "change_request.approved", "change_request.rejected",
                "change_request.applied", "change_request.suspended", "version.published",
            ]
            let created = try await server.send(
                .post,
                Self.path,
                json: ["url": .string(Self.deadURL), "events": events]
            )
            let endpoint = try #require(created.object?["id"]?.stringValue, "\(created.text)")
            try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
            let reviewer = try await ChangeRequestTests.reviewer(server)

            let first = try await ChangeRequestTests.open(
                server,
                ["kind": "template", "template": try await ChangeRequestTests.template(server, banner: "Hello")],
                title: "greeting"
            )
            let comment = try await server.send(
                .post,
                ChangeRequestTests.requests + "/" + first.id + "/comments",
                key: reviewer.key,
                json: ["comment": "reading it"]
            )
            #expect(comment.status == .ok, "\(comment.text)")
            let approved = try await ChangeRequestTests.review(
                server,
                first.id,
                "approve",
                hash: first.hash,
                key: reviewer.key
            )
            #expect(approved.status == .ok, "\(approved.text)")
            let applied = try await ChangeRequestTests.apply(server, first.id)
            #expect(applied.status == .ok, "\(applied.text)")

            let second = try await ChangeRequestTests.open(
                server,
                ["kind": "template", "template": try await ChangeRequestTests.template(server, banner: "Bye")],
                title: "farewell"
            )
            let edited = try await server.send(
                .patch,
                ChangeRequestTests.requests + "/" + second.id,
                json: ["title": "farewell, kinder"]
            )
            #expect(edited.status == .ok, "\(edited.text)")
            let newHash = try #require(edited.object?["contentHash"]?.stringValue)
            let rejected = try await ChangeRequestTests.review(
                server,
                second.id,
                "reject",
                hash: newHash,
                key: reviewer.key
            )
            #expect(rejected.status == .ok, "\(rejected.text)")

            let page = try await server.send(.get, Self.path + "/" + endpoint + "/deliveries")
            let deliveries = try #require(page.object?["deliveries"]?.arrayValue, "\(page.text)").compactMap(
                \.objectValue
            )
            let summary = deliveries.reversed().map {
                "\($0["type"]?.stringValue ?? "?") \($0["version"]?.numberValue?.intValue ?? -1)"
            }
            #expect(
                summary == [
                    "change_request.opened 1", "change_request.approved 1", "change_request.applied 2",
                    "version.published 2", "change_request.opened 2", "change_request.opened 2",
                    "change_request.rejected 2",
                ]
            )
            let stored = try await server.application.store.engine.withSession { database in
                try await database.raw(
                    "SELECT payload FROM webhook_messages WHERE event_type = 'change_request.rejected'"
                ).first()?.decode(column: "payload", as: String.self)
            }
            let data = try #require(stored.flatMap { try? JSONValue.parse($0) }?.objectValue?["data"]?.objectValue)
            #expect(data["changeRequest"]?.stringValue == second.id)
            #expect(data["title"] == "farewell, kinder" && data["kind"] == "template")
            #expect(data["contentHash"]?.stringValue == newHash)
            #expect(data["actor"]?.stringValue?.contains("reviewer") == true, "the reviewer who rejected it: \(data)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func everyChangeWritesOneMessageInVersionOrder(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: Self.allowingLoopback) { server in
            let created = try await server.send(.post, Self.path, json: ["url": .string(Self.deadURL)])
            let id = try #require(created.object?["id"]?.stringValue)
            let template = try await server.send(.get, TestServer.demoPath + "/template")
            var parameters = try #require(template.object?["parameters"]?.objectValue)
            parameters["webhook_test"] = ["defaultValue": ["value": "1"]]
            var body = try #require(template.object)
            body["version"] = nil
            body["parameters"] = .object(parameters)
            let published = try await server.send(
                .put,
                TestServer.demoPath + "/template",
                json: .object(body),
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(published.status == .ok, "\(published.text)")
            let stale = try await server.send(
                .put,
                TestServer.demoPath + "/template",
                json: .object(body),
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(stale.status == .preconditionFailed, "a refused publish")
            let rollback = try await server.send(.post, TestServer.demoPath + "/rollback", json: ["versionNumber": "1"])
            #expect(rollback.status == .ok, "\(rollback.text)")
            let off = try await server.send(
                .post,
                TestServer.demoPath + "/flags/payments_enabled/switch",
                json: ["to": "off", "message": "outage"]
            )
            #expect(off.status == .ok, "\(off.text)")
            let experiments = TestServer.demoPath + "/experiments"
            #expect(try await server.send(.post, experiments, json: ExperimentAPITests.checkout).status == .created)
            #expect(try await server.send(.post, experiments + "/checkout-button/start").status == .ok)
            #expect(try await server.send(.post, experiments + "/checkout-button/stop").status == .ok)

            // Newest first; the first one was tried once (nothing listens) and blocks the rest.
            let page = try await server.send(.get, Self.path + "/" + id + "/deliveries")
            #expect(page.status == .ok, "\(page.text)")
            let items = try #require(page.object?["deliveries"]?.arrayValue)
            let deliveries = items.compactMap(\.objectValue)
            let summary = deliveries.reversed().map {
                "\($0["type"]?.stringValue ?? "?") \($0["version"]?.numberValue?.intValue ?? -1)"
            }
            #expect(
                summary == [
                    "version.published 2", "version.rolled_back 3", "flag.kill_switch 4", "experiment.started 4",
                    "experiment.stopped 4",
                ]
            )
            #expect(deliveries.allSatisfy { $0["status"] == "pending" })
            #expect(Set(deliveries.compactMap { $0["message"]?.stringValue }).count == 5, "one message per change")
            let first = try #require(deliveries.last)
            let attempted = await eventually(within: 20) {
                let page = try? await server.send(.get, Self.path + "/" + id + "/deliveries")
                let oldest = page?.object?["deliveries"]?.arrayValue?.last?.objectValue
                return oldest?["lastAttempt"]?.objectValue?["error"]?.stringValue != nil
            }
            #expect(attempted, "the oldest delivery is tried and its failure recorded")
            #expect(
                deliveries.dropLast().allSatisfy { $0["lastAttempt"] == nil },
                "later deliveries wait for the oldest"
            )

            // The payload: what the message carries.
            let stored = try await server.application.store.engine.withSession { database in
                try await database.raw(
                    "SELECT payload FROM webhook_messages WHERE id = \(bind: first["message"]?.stringValue ?? "")"
                ).first()?.decode(column: "payload", as: String.self)
            }
            let payload = try #require(stored.flatMap { try? JSONValue.parse($0) }?.objectValue)
            #expect(payload["type"] == "version.published")
            let data = payload["data"]?.objectValue
            #expect(data?["project"] == "demo" && data?["environment"] == "production")
            #expect(data?["version"] == 2 && data?["actor"] == "admin (--admin-key)")

            let again = try await server.send(
                .post,
                Self.path + "/" + id + "/deliveries/" + (first["message"]?.stringValue ?? "") + "/redeliver"
            )
            #expect(again.status == .accepted, "\(again.text)")
            #expect(again.object?["message"] == first["message"], "the same message, so the same webhook-id")
            let after = try await server.send(.get, Self.path + "/" + id + "/deliveries?pageSize=2")
            #expect(after.object?["deliveries"]?.arrayValue?.count == 2)
            #expect(after.object?["deliveries"]?.arrayValue?.first?.objectValue?["message"] == first["message"])
            let token = try #require(after.object?["nextPageToken"]?.stringValue)
            let next = try await server.send(.get, Self.path + "/" + id + "/deliveries?pageSize=10&pageToken=" + token)
            #expect(next.object?["deliveries"]?.arrayValue?.count == 4)
        }
    }

    /// Endpoints that lead into the server's own network are refused when created or changed.
    @Test func endpointsIntoPrivateNetworksAreRefused() async throws {
        try await TestServer.run(.sqlite) { server in
            let urls = [
                "http://127.0.0.1/hook", "http://localhost:8080/hook", "http://[::1]/hook",
                "http://[::ffff:127.0.0.1]/",
                "http://[::ffff:a00:1]/", "http://10.0.0.5/", "http://172.16.3.4/", "http://192.168.1.1/",
                "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/", "http://0.0.0.0/", "http://0/",
                "http://2130706433/", "http://0x7f000001/", "http://127.1/", "http://[fe80::1]/", "http://[fd00::1]/",
                "http://[64:ff9b::a00:1]/", "http://[2002:a00:1::]/", "https://127.0.0.1:8443/",
            ]
            for url in urls {
                let reply = try await server.send(.post, Self.path, json: ["url": .string(url)])
                #expect(reply.status == .badRequest, "\(url): \(reply.text)")
                #expect(reply.errorMessage?.contains("is not a public address") == true, "\(url): \(reply.text)")
            }
            #expect(try await server.send(.get, Self.path).object?["webhooks"] == [], "nothing was stored")
        }
    }

    /// An endpoint whose host resolves to a private address by the time of delivery (DNS changed
    /// since it was created) is not called: the attempt records why.
    @Test(arguments: TestDatabase.allCases)
    func aDeliveryToAnAddressThatBecamePrivateIsNotSent(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            // Stored directly, as if its name had resolved to a public address when it was created.
            let endpoint = try await WebhookStore(engine: server.application.store.engine).createEndpoint(
                projectId: "demo",
                url: "http://localhost:9/hook",
                description: "",
                events: WebhookEventType.allCases,
                enabled: true,
                secret: WebhookSignature.generateSecret(),
                actor: .system
            )
            let off = try await server.send(
                .post,
                TestServer.demoPath + "/flags/payments_enabled/switch",
                json: ["to": "off", "message": "outage"]
            )
            #expect(off.status == .ok)
            var error: String?
            _ = await eventually(within: 20) {
                let page = try? await server.send(.get, Self.path + "/" + endpoint.id + "/deliveries")
                let attempt = page?.object?["deliveries"]?.arrayValue?.first?.objectValue?["lastAttempt"]?.objectValue
                error = attempt?["error"]?.stringValue
                return error != nil && attempt?["statusCode"] == nil
            }
            #expect(error?.contains("is not a public address") == true, "\(error ?? "no attempt")")
        }
    }
}
