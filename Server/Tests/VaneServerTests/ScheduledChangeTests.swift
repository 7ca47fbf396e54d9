import Foundation
import HTTPTypes
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// Scheduled change requests (docs/GOVERNANCE.md, "Scheduled changes") over real HTTP, on both
/// databases: a request applies at its time and not before, an edit voids its time, a stale one
/// is suspended and its author told, a missed one applies on start within the grace and is
/// suspended beyond it, scheduling is refused without permission or at a bad time, and two nodes
/// on one PostgreSQL database apply each request once. Time moves on a ``TestClock``.
@Suite(.timeLimit(.minutes(5))) struct ScheduledChangeTests {
    static let requests = ChangeRequestTests.requests

    /// The live template with a parameter `marker_<marker>` added (nothing else touches it, so
    /// such a change rebases cleanly past any other).
    static func markerTemplate(_ server: TestServer, _ marker: String) async throws -> JSONValue {
        var template = try #require(try await server.send(.get, TestServer.demoPath + "/template").object)
        template["version"] = nil
        var parameters = try #require(template["parameters"]?.objectValue)
        parameters["marker_" + marker] = ["defaultValue": ["value": .string(marker)], "valueType": "STRING"]
        template["parameters"] = .object(parameters)
        return .object(template)
    }

    /// Opens a template request as the test key and has `reviewer` approve it; answers its id.
    static func approved(
        _ server: TestServer,
        _ template: JSONValue,
        reviewer: ChangeRequestTests.Reviewer,
        title: String = "scheduled change"
    ) async throws -> String {
        let request = try await ChangeRequestTests.open(
            server,
            ["kind": "template", "template": template],
            title: title
        )
        let reply = try await ChangeRequestTests.review(
            server,
            request.id,
            "approve",
            hash: request.hash,
            key: reviewer.key
        )
        #expect(reply.object?["state"] == "approved", "\(reply.text)")
        return request.id
    }

    @discardableResult
    static func schedule(
        _ server: TestServer,
        _ id: String,
        at time: Date,
        key: String = TestServer.adminKey
    ) async throws -> TestServer.Reply {
        try await server.send(
            .post,
            requests + "/" + id + "/schedule",
            key: key,
            json: ["applyTime": .string(Clock.rfc3339(milliseconds: Clock.milliseconds(time)))]
        )
    }

    static func request(_ server: TestServer, _ id: String) async throws -> JSONObject {
        try #require(try await server.send(.get, requests + "/" + id).object)
    }

    static func state(_ server: TestServer, _ id: String) async throws -> String? {
        try await request(server, id)["state"]?.stringValue
    }

    /// Waits (up to 30 s) until the request is in `state`.
    static func reaches(_ server: TestServer, _ id: String, _ state: String) async throws -> Bool {
        try await eventually(within: 30) { try await Self.state(server, id) == state }
    }

    /// A server with the policy in force (one approval) and a reviewer key.
    static func governed(_ server: TestServer) async throws -> ChangeRequestTests.Reviewer {
        try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
        return try await ChangeRequestTests.reviewer(server)
    }

    // MARK: - Applying at the time

    @Test(arguments: TestDatabase.allCases)
    func aScheduledRequestAppliesAtItsTimeAndClientsSeeItOnlyThen(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            let reviewer = try await Self.governed(server)
            let client = try await server.createKey(role: "client")
            let id = try await Self.approved(
                server,
                try await ChangeRequestTests.template(server, banner: "Monday launch"),
                reviewer: reviewer
            )
            let due = clock.now.addingTimeInterval(3600)
            let scheduled = try await Self.schedule(server, id, at: due)
            #expect(scheduled.status == .ok, "\(scheduled.text)")
            #expect(scheduled.object?["state"] == "scheduled")
            let applyTime = try #require(scheduled.object?["applyTime"]?.stringValue)
            #expect(Clock.milliseconds(rfc3339: applyTime) == Clock.milliseconds(due))
            let listed = try await server.send(.get, Self.requests + "?state=scheduled")
            #expect(listed.object?["changeRequests"]?.arrayValue?.count == 1, "\(listed.text)")

            let fetch: @Sendable () async throws -> JSONValue? = {
                try await server.send(.post, TestServer.demoPath + "/fetch", key: client, json: ["context": [:]])
                    .object?["entries"]?.objectValue?["banner_text"]
            }
            let ofrep: @Sendable () async throws -> JSONValue? = {
                try await server.send(
                    .post,
                    "/ofrep/v1/evaluate/flags/banner_text",
                    key: client,
                    json: ["context": ["targetingKey": "u1"]]
                ).object?["value"]
            }
            // Five minutes before its time, with the scheduler's passes (each second) going by:
            // clients get the old value. (The test clock runs on from real time: a margin of
            // seconds ran out on a loaded machine before the checks below were done.)
            clock.advance(seconds: 3300)
            try await Task.sleep(for: .milliseconds(2500))
            #expect(try await Self.state(server, id) == "scheduled")
            #expect(try await fetch() == "Welcome to Vane!")
            #expect(try await ofrep() == "Welcome to Vane!")
            #expect(try await ChangeRequestTests.liveVersion(server) == "1")

            clock.advance(seconds: 300)
            #expect(try await Self.reaches(server, id, "applied"))
            #expect(try await fetch() == "Monday launch")
            #expect(try await ofrep() == "Monday launch")
            let applied = try await Self.request(server, id)
            #expect(applied["appliedVersion"] == "2")
            #expect(applied["applyTime"]?.stringValue == applyTime, "it shows when it was due")
            let audit = try await server.send(.get, TestServer.demoPath + "/audit")
            let entries = (audit.object?["entries"]?.arrayValue ?? []).compactMap(\.objectValue)
            let entry = entries.first { $0["action"] == "change_request.apply" }
            let summary = entry?["summary"]?.stringValue ?? ""
            #expect(summary.contains("scheduled apply of change request \(id)"), "\(summary)")
            #expect(summary.contains("approved by reviewer"), "\(summary)")
            #expect(entries.contains { $0["action"] == "change_request.schedule" })
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aRequestEditedOrRejectedAfterSchedulingDoesNotApply(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            let reviewer = try await Self.governed(server)
            let edited = try await Self.approved(
                server,
                try await ChangeRequestTests.template(server, banner: "edited away"),
                reviewer: reviewer
            )
            // Due at the same time: once it applied, the scheduler has passed the edited one by.
            let control = try await Self.approved(
                server,
                try await Self.markerTemplate(server, "control"),
                reviewer: reviewer
            )
            let due = clock.now.addingTimeInterval(600)
            #expect(try await Self.schedule(server, edited, at: due).status == .ok)
            #expect(try await Self.schedule(server, control, at: due).status == .ok)
            let rejected = try await Self.approved(
                server,
                try await Self.markerTemplate(server, "rejected"),
                reviewer: reviewer
            )
            #expect(try await Self.schedule(server, rejected, at: due).status == .ok)
            let second = try await ChangeRequestTests.reviewer(server, name: "second")
            let hash = try #require(try await Self.request(server, rejected)["contentHash"]?.stringValue)
            let rejection = try await ChangeRequestTests.review(server, rejected, "reject", hash: hash, key: second.key)
            #expect(rejection.object?["state"] == "rejected", "\(rejection.text)")
            #expect(rejection.object?["applyTime"] == nil && rejection.object?["stateReason"] == nil)
            let edit = try await server.send(
                .patch,
                Self.requests + "/" + edited,
                json: ["description": "one more thing"]
            )
            #expect(edit.status == .ok, "\(edit.text)")
            #expect(edit.object?["state"] == "in_review", "an edit voids the approvals and the time")
            #expect(edit.object?["applyTime"] == nil, "\(edit.text)")

            clock.advance(seconds: 601)
            #expect(try await Self.reaches(server, control, "applied"))
            #expect(try await Self.state(server, edited) == "in_review")
            #expect(try await Self.state(server, rejected) == "rejected")
            #expect(
                try await ChangeRequestTests.state(server)[3] == "Welcome to Vane!",
                "the edited change is not live"
            )
            let parameters = try await server.send(.get, TestServer.demoPath + "/template").object?["parameters"]?
                .objectValue
            #expect(parameters?["marker_rejected"] == nil, "nor the rejected one")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aScheduledRequestWhoseBaseMovedAndConflictsIsSuspendedAndItsAuthorTold(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, configure: WebhookAPITests.allowingLoopback, clock: clock) { server in
            let created = try await server.send(
                .post,
                WebhookAPITests.path,
                json: ["url": .string(WebhookAPITests.deadURL), "events": ["change_request.suspended"]]
            )
            let endpoint = try #require(created.object?["id"]?.stringValue, "\(created.text)")
            let reviewer = try await Self.governed(server)
            let id = try await Self.approved(
                server,
                try await ChangeRequestTests.template(server, banner: "scheduled"),
                reviewer: reviewer
            )
            #expect(try await Self.schedule(server, id, at: clock.now.addingTimeInterval(600)).status == .ok)
            // Meanwhile the same parameter changes another way.
            let other = try await Self.approved(
                server,
                try await ChangeRequestTests.template(server, banner: "theirs"),
                reviewer: reviewer
            )
            #expect(try await ChangeRequestTests.apply(server, other).status == .ok)

            clock.advance(seconds: 601)
            #expect(try await Self.reaches(server, id, "suspended"))
            let suspended = try await Self.request(server, id)
            let reason = suspended["stateReason"]?.stringValue ?? ""
            #expect(reason.contains("changed what it changes"), "\(reason)")
            #expect(try await ChangeRequestTests.state(server)[3] == "theirs", "nothing applied blindly")
            let page = try await server.send(.get, WebhookAPITests.path + "/" + endpoint + "/deliveries")
            let types = (page.object?["deliveries"]?.arrayValue ?? []).compactMap {
                $0.objectValue?["type"]?.stringValue
            }
            #expect(types == ["change_request.suspended"], "\(page.text)")
        }
    }

    // MARK: - Missed schedules

    @Test(arguments: TestDatabase.allCases)
    func aNodeStartingLateAppliesWhatIsWithinTheGraceAndSuspendsTheRest(database: TestDatabase) async throws {
        let configuration = try await database.configuration()
        let start = Date()
        let (withinGrace, beyondGrace) = try await TestServer.run(configuration: configuration) { server in
            let reviewer = try await Self.governed(server)
            let beyond = try await Self.approved(
                server,
                try await Self.markerTemplate(server, "beyond"),
                reviewer: reviewer
            )
            let within = try await Self.approved(
                server,
                try await Self.markerTemplate(server, "within"),
                reviewer: reviewer
            )
            #expect(try await Self.schedule(server, beyond, at: start.addingTimeInterval(600)).status == .ok)
            #expect(try await Self.schedule(server, within, at: start.addingTimeInterval(7200)).status == .ok)
            return (within, beyond)
        }
        // Nobody runs at either time; a node starts 2 h 30 min after the start: the first is
        // 2 h 20 min late (beyond the default hour), the second 30 min (within it).
        let late = TestClock()
        late.advance(seconds: 9000)
        try await TestServer.run(configuration: configuration, clock: late) { server in
            #expect(try await Self.reaches(server, withinGrace, "applied"))
            #expect(try await Self.reaches(server, beyondGrace, "suspended"))
            let reason = try await Self.request(server, beyondGrace)["stateReason"]?.stringValue ?? ""
            #expect(reason.contains("more than the grace of 60 min"), "\(reason)")
            let parameters = try await server.send(.get, TestServer.demoPath + "/template").object?["parameters"]?
                .objectValue
            #expect(parameters?["marker_within"] != nil)
            #expect(parameters?["marker_beyond"] == nil)
        }
    }

    // MARK: - Refusals

    @Test(arguments: TestDatabase.allCases)
    func schedulingIsRefusedWithoutPermissionOrAtABadTime(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            let reviewer = try await Self.governed(server)
            let unapproved = try await ChangeRequestTests.open(
                server,
                ["kind": "template", "template": try await Self.markerTemplate(server, "a")]
            )
            let notYet = try await Self.schedule(server, unapproved.id, at: clock.now.addingTimeInterval(600))
            #expect(notYet.status == .preconditionFailed, "\(notYet.text)")
            #expect(notYet.errorMessage?.contains("approved") == true, "\(notYet.text)")

            let id = try await Self.approved(server, try await Self.markerTemplate(server, "b"), reviewer: reviewer)
            let serverKey = try await server.createKey(role: "server")
            let forbidden = try await Self.schedule(server, id, at: clock.now.addingTimeInterval(600), key: serverKey)
            #expect(forbidden.status == .forbidden, "\(forbidden.text)")

            let path = Self.requests + "/" + id + "/schedule"
            let bad: [(JSONValue, String)] = [
                ([:], "applyTime"),
                (["applyTime": "next monday"], "RFC 3339"),
                (["applyTime": "2026-12-01T09:00:00"], "RFC 3339"),
                (["applyTime": 5], "applyTime"),
                (
                    ["applyTime": .string(Clock.rfc3339(milliseconds: Clock.milliseconds(clock.now) - 1000))],
                    "not in the future"
                ),
                (
                    [
                        "applyTime": .string(
                            Clock.rfc3339(milliseconds: Clock.milliseconds(clock.now.addingTimeInterval(400 * 86_400)))
                        )
                    ],
                    "more than a year"
                ),
            ]
            for (body, says) in bad {
                let reply = try await server.send(.post, path, json: body)
                #expect(reply.status == .badRequest, "\(body): \(reply.text)")
                #expect(reply.errorMessage?.contains(says) == true, "\(body): \(reply.text)")
            }
            #expect(try await Self.state(server, id) == "approved", "nothing changed")

            // Past the server's clock, not the test machine's: the test clock is what it reads.
            clock.advance(seconds: 86_400)
            let yesterday = try await Self.schedule(server, id, at: Date().addingTimeInterval(3600))
            #expect(yesterday.status == .badRequest, "\(yesterday.text)")

            let scheduled = try await Self.schedule(server, id, at: clock.now.addingTimeInterval(600))
            #expect(scheduled.status == .ok, "\(scheduled.text)")
            let unscheduled = try await server.send(.delete, path)
            #expect(unscheduled.status == .ok, "\(unscheduled.text)")
            #expect(unscheduled.object?["state"] == "approved")
            #expect(unscheduled.object?["applyTime"] == nil)
            let again = try await server.send(.delete, path)
            #expect(again.status == .preconditionFailed, "not scheduled any more: \(again.text)")
        }
    }

    // MARK: - Two nodes

    @Test(.needsPostgreSQL)
    func twoNodesOnOnePostgreSQLDatabaseApplyEachRequestOnce() async throws {
        var configuration = try await TestDatabase.postgres.configuration()
        configuration.pollIntervalMilliseconds = 200
        let shared = configuration
        let clock = TestClock()
        try await TestServer.run(configuration: shared, clock: clock) { first in
            try await TestServer.run(configuration: shared, clock: clock) { second in
                let reviewer = try await Self.governed(first)
                var ids: [String] = []
                let due = clock.now.addingTimeInterval(600)
                for index in 0..<6 {
                    let id = try await Self.approved(
                        first,
                        try await Self.markerTemplate(first, "node\(index)"),
                        reviewer: reviewer,
                        title: "change \(index)"
                    )
                    // Scheduled on either node.
                    let node = index.isMultiple(of: 2) ? first : second
                    #expect(try await Self.schedule(node, id, at: due).status == .ok)
                    ids.append(id)
                }
                clock.advance(seconds: 601)
                for id in ids {
                    #expect(try await Self.reaches(second, id, "applied"), "\(id)")
                }
                let descriptions = try await first.application.store.engine.withSession { database in
                    try await database.raw(
                        "SELECT description FROM template_versions WHERE version_number > 1"
                    ).all().map { try $0.decode(column: "description", as: String?.self) ?? "" }
                }
                #expect(descriptions.count == ids.count, "one version per request: \(descriptions)")
                for id in ids {
                    #expect(descriptions.filter { $0.contains(id) }.count == 1, "\(id): \(descriptions)")
                }
                let parameters = try await second.send(.get, TestServer.demoPath + "/template").object?[
                    "parameters"
                ]?.objectValue
                #expect((0..<6).allSatisfy { parameters?["marker_node\($0)"] != nil }, "every change rebased in")
            }
        }
    }
}
