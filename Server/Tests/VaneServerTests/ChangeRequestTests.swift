import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// Change requests and the change policy (docs/GOVERNANCE.md) over real HTTP, on both databases:
/// every write path refused without an approved request, every way a request can fall short of
/// approval refused at apply, each kind's happy path, break-glass, and a policy switched on
/// while publishes race it.
@Suite struct ChangeRequestTests {
    static let requests = TestServer.demoPath + "/change-requests"
    static let policyPath = TestServer.demoPath + "/change-policy"
    static let experiments = TestServer.demoPath + "/experiments"

    /// A second admin key that reviews (the test key is every request's author), and its id.
    struct Reviewer {
        var key: String
        var id: String
    }

    static func reviewer(_ server: TestServer, name: String = "reviewer") async throws -> Reviewer {
        let reply = try await server.send(.post, "/v1/keys", json: ["name": .string(name), "role": "admin"])
        return Reviewer(
            key: try #require(reply.object?["key"]?.stringValue, "\(reply.text)"),
            id: try #require(reply.object?["id"]?.stringValue)
        )
    }

    static func setPolicy(_ server: TestServer, _ policy: JSONObject) async throws {
        let reply = try await server.send(.put, policyPath, json: .object(policy))
        #expect(reply.status == .ok, "\(reply.text)")
    }

    /// The live template with `banner_text`'s default value replaced.
    static func template(_ server: TestServer, banner: String) async throws -> JSONValue {
        var template = try #require(try await server.send(.get, TestServer.demoPath + "/template").object)
        var parameters = try #require(template["parameters"]?.objectValue)
        var bannerParameter = try #require(parameters["banner_text"]?.objectValue)
        bannerParameter["defaultValue"] = ["value": .string(banner)]
        parameters["banner_text"] = .object(bannerParameter)
        template["parameters"] = .object(parameters)
        template["version"] = nil
        return .object(template)
    }

    static func liveVersion(_ server: TestServer) async throws -> String? {
        try await server.send(.get, TestServer.demoPath + "/template").object?["version"]?.objectValue?[
            "versionNumber"
        ]?
        .stringValue
    }

    static func experimentStatus(_ server: TestServer) async throws -> String? {
        try await server.send(.get, experiments + "/checkout-button").object?["status"]?.stringValue
    }

    /// Opens a request as the test key (the author); answers its id and content hash.
    static func open(
        _ server: TestServer,
        _ change: JSONObject,
        title: String = "change"
    ) async throws -> (
        id: String, hash: String
    ) {
        let reply = try await server.send(.post, requests, json: ["title": .string(title), "change": .object(change)])
        #expect(reply.status == .created, "\(reply.text)")
        return (
            try #require(reply.object?["id"]?.stringValue, "\(reply.text)"),
            try #require(reply.object?["contentHash"]?.stringValue)
        )
    }

    @discardableResult
    static func review(
        _ server: TestServer,
        _ id: String,
        _ decision: String,
        hash: String,
        key: String
    ) async throws -> TestServer.Reply {
        try await server.send(
            .post,
            requests + "/" + id + "/" + decision,
            key: key,
            json: ["contentHash": .string(hash), "comment": "looked at it"]
        )
    }

    static func apply(
        _ server: TestServer,
        _ id: String,
        key: String = TestServer.adminKey,
        breakGlass: String? = nil
    )
        async throws -> TestServer.Reply
    {
        try await server.send(
            .post,
            requests + "/" + id + "/apply",
            key: key,
            json: breakGlass.map { ["breakGlass": .string($0)] } ?? [:]
        )
    }

    /// Publishes a new live version through an approved request (the only way once a policy is
    /// in force), changing a parameter nothing else in these tests touches.
    static func landVersion(_ server: TestServer, _ reviewer: Reviewer, marker: String) async throws {
        var template = try #require(try await server.send(.get, TestServer.demoPath + "/template").object)
        template["version"] = nil
        var parameters = try #require(template["parameters"]?.objectValue)
        parameters["marker_" + marker] = ["defaultValue": ["value": .string(marker)], "valueType": "STRING"]
        template["parameters"] = .object(parameters)
        let request = try await open(server, ["kind": "template", "template": .object(template)])
        try await review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
        let applied = try await apply(server, request.id)
        #expect(applied.status == .ok, "\(applied.text)")
    }

    /// The demo experiment created; running when `start`.
    static func createExperiment(_ server: TestServer, start: Bool) async throws {
        let created = try await server.send(.post, experiments, json: ExperimentAPITests.checkout)
        #expect(created.status == .created, "\(created.text)")
        if start { try await server.send(.post, experiments + "/checkout-button/start") }
    }

    // MARK: - Direct paths

    @Test(arguments: TestDatabase.allCases)
    func everyDirectWritePathIsRefusedWithTheRequestToOpen(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.createExperiment(server, start: true)
            // A second draft on the same parameter: the policy refuses its start before anything else.
            var second = try #require(ExperimentAPITests.checkout.objectValue)
            second["key"] = "checkout-two"
            let createdSecond = try await server.send(.post, Self.experiments, json: .object(second))
            #expect(createdSecond.status == .created, "\(createdSecond.text)")
            try await server.publish(try await Self.template(server, banner: "v2"))
            try await Self.setPolicy(server, ["required": true, "approvals": 1])
            let reviewer = try await Self.reviewer(server)
            // An approved request for exactly the template the PUT sends opens no direct path.
            let same = try await Self.template(server, banner: "approved elsewhere")
            let approved = try await Self.open(server, ["kind": "template", "template": same])
            try await Self.review(server, approved.id, "approve", hash: approved.hash, key: reviewer.key)

            let paths: [(String, HTTPRequest.Method, String, JSONValue?, HTTPFields, String)] = [
                ("PUT template", .put, TestServer.demoPath + "/template", same, [.ifMatch: "*"], "template"),
                ("rollback", .post, TestServer.demoPath + "/rollback", ["versionNumber": "1"], [:], "rollback"),
                (
                    "kill switch", .post, TestServer.demoPath + "/flags/payments_enabled/switch",
                    ["to": "off", "message": "outage"], [:], "template"
                ),
                (
                    "condition rename", .post, TestServer.demoPath + "/conditions/germany_austria/rename",
                    ["name": "dach"], [:], "template"
                ),
                ("experiment start", .post, Self.experiments + "/checkout-two/start", nil, [:], "experiment_start"),
                ("experiment stop", .post, Self.experiments + "/checkout-button/stop", nil, [:], "experiment_stop"),
                ("policy change", .put, Self.policyPath, ["required": false], [:], "policy"),
            ]
            for (name, method, path, body, headers, kind) in paths {
                let reply = try await server.send(method, path, json: body, headers: headers)
                #expect(reply.status == .conflict, "\(name): \(reply.text)")
                #expect(reply.errorStatus == "CHANGE_REQUEST_REQUIRED", "\(name)")
                let message = reply.errorMessage ?? ""
                #expect(message.contains("/change-requests"), "\(name) says where to open one: \(message)")
                #expect(message.contains("\"kind\": \"\(kind)\""), "\(name) says which kind: \(message)")
            }
            #expect(try await Self.liveVersion(server) == "2", "nothing was published")
            #expect(try await Self.experimentStatus(server) == "running")
            let other = try await server.send(.get, Self.experiments + "/checkout-two")
            #expect(other.object?["status"] == "draft")
            let policy = try await server.send(.get, Self.policyPath)
            #expect(policy.object?["required"] == .bool(true))
        }
    }

    // MARK: - Apply refused per kind and scenario

    enum Scenario: String, CaseIterable {
        case noApproval, staleAfterApproval, editedAfterApproval, selfApproved, rejected
    }

    /// Each kind's change on the demo project (the experiment is created as the kind needs it).
    static func change(_ kind: String, _ server: TestServer) async throws -> JSONObject {
        switch kind {
        case "template":
            return ["kind": "template", "template": try await template(server, banner: "proposed")]
        case "rollback":
            return ["kind": "rollback", "versionNumber": "1"]
        case "experiment_start":
            try await createExperiment(server, start: false)
            return ["kind": "experiment_start", "experiment": "checkout-button"]
        case "experiment_stop":
            try await createExperiment(server, start: true)
            return ["kind": "experiment_stop", "experiment": "checkout-button"]
        default:
            return ["kind": "policy", "policy": ["required": false]]
        }
    }

    /// What the live state is, to compare before and after a refused apply.
    static func state(_ server: TestServer) async throws -> [String?] {
        [
            try await liveVersion(server), try await experimentStatus(server),
            try await server.send(.get, policyPath).object?["required"]?.boolValue.map(String.init),
            try await server.send(.get, TestServer.demoPath + "/template").object?["parameters"]?.objectValue?[
                "banner_text"
            ]?.objectValue?["defaultValue"]?.objectValue?["value"]?.stringValue,
        ]
    }

    @Test(arguments: TestDatabase.allCases, ProposedChange.kinds)
    func applyIsRefusedUnlessApprovedAtItsHashOnTheLiveVersion(database: TestDatabase, kind: String) async throws {
        try await TestServer.run(database) { server in
            // Version 2 first, so a rollback to 1 is possible.
            try await server.publish(try await Self.template(server, banner: "v2"))
            let change = try await Self.change(kind, server)
            try await Self.setPolicy(server, ["required": true, "approvals": 1])
            let reviewer = try await Self.reviewer(server)
            for scenario in Scenario.allCases {
                let request = try await Self.open(server, change, title: scenario.rawValue)
                var expected = "CHANGE_REQUEST_NOT_APPROVED"
                var says = "approval"
                // What the suspension names, as people read it (the flag's key).
                var names: String?
                switch scenario {
                case .noApproval:
                    break
                case .staleAfterApproval:
                    try await Self.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
                    try await Self.landVersion(server, reviewer, marker: "m\(kind.count)")
                    // A template change that touches only banner_text rebases cleanly past a new
                    // parameter; make it conflict: the live banner changes too.
                    if kind == "template" {
                        let conflicting = try await Self.open(
                            server,
                            ["kind": "template", "template": try await Self.template(server, banner: "theirs")]
                        )
                        try await Self.review(
                            server,
                            conflicting.id,
                            "approve",
                            hash: conflicting.hash,
                            key: reviewer.key
                        )
                        #expect(try await Self.apply(server, conflicting.id).status == .ok)
                        names = "(banner_text)"
                    }
                    expected = "CHANGE_REQUEST_SUSPENDED"
                    says = "suspended"
                case .editedAfterApproval:
                    try await Self.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
                    let edited = try await server.send(
                        .patch,
                        Self.requests + "/" + request.id,
                        json: ["description": "one more thing"]
                    )
                    #expect(edited.status == .ok, "\(edited.text)")
                    #expect(edited.object?["state"] == "in_review", "an edit voids the approval")
                    let late = try await Self.review(
                        server,
                        request.id,
                        "approve",
                        hash: request.hash,
                        key: reviewer.key
                    )
                    #expect(late.status == .conflict, "an approval of the old revision: \(late.text)")
                    #expect(late.errorStatus == "CHANGE_REQUEST_CHANGED")
                case .selfApproved:
                    let own = try await Self.review(
                        server,
                        request.id,
                        "approve",
                        hash: request.hash,
                        key: TestServer.adminKey
                    )
                    #expect(own.status == .forbidden, "\(own.text)")
                    #expect(own.errorMessage?.contains("their own") == true)
                case .rejected:
                    try await Self.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
                    let second = try await Self.reviewer(server, name: "second-\(kind)")
                    let rejected = try await Self.review(
                        server,
                        request.id,
                        "reject",
                        hash: request.hash,
                        key: second.key
                    )
                    #expect(rejected.object?["state"] == "rejected", "\(rejected.text)")
                    says = "rejected"
                }
                let before = try await Self.state(server)
                let reply = try await Self.apply(server, request.id)
                #expect(reply.status == .conflict, "\(kind) \(scenario): \(reply.text)")
                #expect(reply.errorStatus == expected, "\(kind) \(scenario): \(reply.text)")
                #expect(reply.errorMessage?.contains(says) == true, "\(kind) \(scenario): \(reply.text)")
                if let names {
                    #expect(reply.errorMessage?.contains(names) == true, "\(kind) \(scenario): \(reply.text)")
                }
                #expect(try await Self.state(server) == before, "\(kind) \(scenario): nothing applied")
                let after = try await server.send(.get, Self.requests + "/" + request.id)
                #expect(after.object?["state"] != "applied")
                if scenario == .staleAfterApproval {
                    #expect(after.object?["state"] == "suspended", "\(after.text)")
                }
                // Clear the way for the next scenario.
                try await server.send(.post, Self.requests + "/" + request.id + "/cancel")
            }
        }
    }

    // MARK: - Happy paths

    @Test(arguments: TestDatabase.allCases, ProposedChange.kinds)
    func anApprovedRequestAppliesOnceThroughTheOnePublisher(database: TestDatabase, kind: String) async throws {
        try await TestServer.run(database) { server in
            try await server.publish(try await Self.template(server, banner: "v2"))
            let change = try await Self.change(kind, server)
            try await Self.setPolicy(server, ["required": true, "approvals": 2, "approvers": []])
            let first = try await Self.reviewer(server, name: "first")
            let second = try await Self.reviewer(server, name: "second")
            let request = try await Self.open(server, change, title: "the \(kind) change")
            let shown = try await server.send(.get, Self.requests + "/" + request.id)
            let preview = shown.object?["preview"]?.objectValue
            #expect(preview?["liveVersion"] == "2")
            if kind == "template" {
                #expect(preview?["applies"] == "on_base")
                #expect(preview?["diff"] != nil, "reviewers see the diff that will apply")
                let impact = preview?["impact"]?.arrayValue?.compactMap { $0.objectValue?["key"]?.stringValue }
                #expect(
                    impact == ["banner_text"],
                    "and how many sampled users get another value: \(shown.text)"
                )
            }
            let once = try await Self.review(server, request.id, "approve", hash: request.hash, key: first.key)
            #expect(once.object?["state"] == "in_review", "1 of 2 approvals")
            // The same reviewer twice still counts once.
            try await Self.review(server, request.id, "approve", hash: request.hash, key: first.key)
            #expect(try await Self.apply(server, request.id).errorStatus == "CHANGE_REQUEST_NOT_APPROVED")
            let twice = try await Self.review(server, request.id, "approve", hash: request.hash, key: second.key)
            #expect(twice.object?["state"] == "approved", "\(twice.text)")

            let applied = try await Self.apply(server, request.id)
            #expect(applied.status == .ok, "\(applied.text)")
            #expect(applied.object?["state"] == "applied")
            switch kind {
            case "template":
                #expect(try await Self.liveVersion(server) == "3")
                #expect(try await Self.state(server)[3] == "proposed")
                #expect(applied.object?["appliedVersion"] == "3")
            case "rollback":
                #expect(try await Self.liveVersion(server) == "3")
                #expect(try await Self.state(server)[3] == "Welcome to Vane!")
            case "experiment_start":
                #expect(try await Self.experimentStatus(server) == "running")
            case "experiment_stop":
                #expect(try await Self.experimentStatus(server) == "stopped")
            default:
                #expect(try await server.send(.get, Self.policyPath).object?["required"] == .bool(false))
            }
            let again = try await Self.apply(server, request.id)
            #expect(again.status == .preconditionFailed, "applies once: \(again.text)")
            let audit = try await server.send(.get, TestServer.demoPath + "/audit")
            let actions = (audit.object?["entries"]?.arrayValue ?? []).compactMap {
                $0.objectValue?["action"]?.stringValue
            }
            #expect(actions.contains("change_request.apply"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aTemplateRequestRebasesCleanlyOntoANewerVersion(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.setPolicy(server, ["required": true, "approvals": 1])
            let reviewer = try await Self.reviewer(server)
            let request = try await Self.open(
                server,
                ["kind": "template", "template": try await Self.template(server, banner: "rebased")]
            )
            try await Self.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
            try await Self.landVersion(server, reviewer, marker: "other")
            let shown = try await server.send(.get, Self.requests + "/" + request.id)
            #expect(shown.object?["preview"]?.objectValue?["applies"] == "rebased", "\(shown.text)")
            let applied = try await Self.apply(server, request.id)
            #expect(applied.status == .ok, "\(applied.text)")
            let parameters = try await server.send(.get, TestServer.demoPath + "/template").object?["parameters"]?
                .objectValue
            #expect(parameters?["marker_other"] != nil, "the newer version's change stays")
            #expect(try await Self.state(server)[3] == "rebased")
        }
    }

    // MARK: - Break-glass and the kill switch

    @Test(arguments: TestDatabase.allCases)
    func breakGlassAppliesAtOnceAuditedAndOnlyForThoseNamed(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let onCall = try await Self.reviewer(server, name: "on-call")
            let reviewer = try await Self.reviewer(server)
            try await Self.setPolicy(
                server,
                ["required": true, "approvals": 1, "breakGlass": [.string(onCall.id)]]
            )
            let request = try await Self.open(
                server,
                ["kind": "template", "template": try await Self.template(server, banner: "hotfix")]
            )
            let refused = try await Self.apply(server, request.id, breakGlass: "not named")
            #expect(refused.status == .forbidden, "\(refused.text)")
            #expect(refused.errorMessage?.contains("breakGlass") == true)
            #expect(try await Self.liveVersion(server) == "1")

            let applied = try await Self.apply(server, request.id, key: onCall.key, breakGlass: "payments down")
            #expect(applied.status == .ok, "\(applied.text)")
            #expect(applied.object?["state"] == "applied")
            #expect(applied.object?["breakGlass"] == "payments down")
            #expect(try await Self.liveVersion(server) == "2")
            // The post-hoc review: reviewers still approve or reject what went out.
            let review = try await Self.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
            #expect(review.status == .ok, "\(review.text)")
            #expect(review.object?["state"] == "applied")
            let audit = try await server.send(.get, TestServer.demoPath + "/audit")
            let entry = (audit.object?["entries"]?.arrayValue ?? []).compactMap(\.objectValue).first {
                $0["action"] == "change_request.break_glass"
            }
            #expect(entry?["summary"]?.stringValue?.contains("BREAK-GLASS") == true)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theKillSwitchPublishesAtOnceOnlyWhenThePolicyPreApprovesIt(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let path = TestServer.demoPath + "/flags/payments_enabled/switch"
            try await Self.setPolicy(server, ["required": true, "approvals": 1])
            let refused = try await server.send(.post, path, json: ["to": "off", "message": "outage"])
            #expect(refused.status == .conflict)
            #expect(refused.errorStatus == "CHANGE_REQUEST_REQUIRED")

            // Declaring it pre-approved is a policy change: itself through a request now.
            let reviewer = try await Self.reviewer(server)
            let request = try await Self.open(
                server,
                ["kind": "policy", "policy": ["required": true, "approvals": 1, "killSwitchPreApproved": true]]
            )
            try await Self.review(server, request.id, "approve", hash: request.hash, key: reviewer.key)
            #expect(try await Self.apply(server, request.id).status == .ok)
            let off = try await server.send(.post, path, json: ["to": "off", "message": "outage"])
            #expect(off.status == .ok, "\(off.text)")
            #expect(off.object?["published"] == .bool(true))
            // Everything else still needs a request.
            let put = try await server.publish(try await Self.template(server, banner: "x"))
            #expect(put.status == .conflict)
        }
    }

    // MARK: - The race

    @Test(arguments: TestDatabase.allCases)
    func aPolicySwitchedOnDuringPublishesIsNeverSlippedPast(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            var bodies: [JSONValue] = []
            // Eight: publishes on one node take turns, so the last of a larger burst waits for all the
            // others, and on a loaded machine past the test client's 20 s.
            for index in 0..<8 { bodies.append(try await Self.template(server, banner: "race \(index)")) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status?.self) { group in
                for (index, body) in bodies.enumerated() {
                    // A connection each, so the requests really race.
                    group.addTask {
                        try await server.sendOnItsOwnConnection(
                            .put,
                            TestServer.demoPath + "/template",
                            json: body,
                            headers: [.ifMatch: "*"]
                        ).status
                    }
                    if index == 3 {
                        group.addTask {
                            let reply = try await server.sendOnItsOwnConnection(
                                .put,
                                Self.policyPath,
                                json: ["required": true, "approvals": 1]
                            )
                            #expect(reply.status == .ok, "\(reply.text)")
                            return nil
                        }
                    }
                }
                var statuses: [HTTPResponse.Status] = []
                for try await status in group { if let status { statuses.append(status) } }
                return statuses
            }
            #expect(Set(statuses).isSubset(of: [.ok, .conflict]), "\(statuses)")
            let policy = try await server.send(.get, Self.policyPath)
            let effective = try #require(policy.object?["effectiveVersion"]?.stringValue.flatMap(Int.init))
            // Every publish that landed did so before the policy: none after the version live
            // when it was written.
            #expect(try await Self.liveVersion(server) == String(effective))
            #expect(statuses.filter { $0 == .ok }.count == effective - 1)
            #expect(statuses.filter { $0 == .conflict }.count == bodies.count - (effective - 1))
        }
    }

    // MARK: - Bad input

    @Test(arguments: TestDatabase.allCases)
    func badRequestsAndPoliciesSayWhereAndWhatWasExpected(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let cases: [(String, HTTPRequest.Method, JSONValue, String)] = [
                (Self.policyPath, .put, ["required": true, "approvals": 11], "approvals"),
                (Self.policyPath, .put, ["required": "yes"], "required"),
                (Self.policyPath, .put, ["required": true, "approvals": 1, "approvers": [1]], "approvers[0]"),
                (Self.requests, .post, ["title": "t", "change": ["kind": "rollout"]], "change.kind"),
                (Self.requests, .post, ["title": "t", "change": ["kind": "rollback"]], "change.versionNumber"),
                (Self.requests, .post, ["change": ["kind": "rollback", "versionNumber": "1"]], "title"),
                (
                    Self.requests, .post, ["title": "t", "change": ["kind": "rollback", "versionNumber": "5"]],
                    "before the live"
                ),
            ]
            for (path, method, body, says) in cases {
                let reply = try await server.send(method, path, json: body)
                #expect(reply.status == .badRequest, "\(body): \(reply.text)")
                #expect(reply.text.contains(says), "\(body): \(reply.text)")
            }
            let missing = try await server.send(.get, Self.requests + "/cr_missing")
            #expect(missing.status == .notFound)
            let state = try await server.send(.get, Self.requests + "?state=open")
            #expect(state.status == .badRequest)
            #expect(try await server.send(.get, Self.requests).object?["changeRequests"] == .array([]))
        }
    }
}
