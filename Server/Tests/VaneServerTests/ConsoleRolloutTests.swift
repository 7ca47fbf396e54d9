import Foundation
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The console's rollout pages (issue #30) over real HTTP, on both databases: the page with its
/// plan, timeline, guardrail chart and decisions; pause, resume, stop and roll back by role with
/// the form token; creating a plan from the form, and starting it directly or, under a change
/// policy, through a `rollout_start` change request. The browser test
/// (Server/BrowserTests/test_rollouts.py) clicks through the same pages in Chromium.
@Suite(.timeLimit(.minutes(10))) struct ConsoleRolloutTests {
    static let environment = "/projects/demo/environments/production"
    static let base = environment + "/rollouts"
    static let page = base + "/image-cache-v2"

    /// A started rollout at 10 % with 200 exposed units per arm, crashing alike (no regression).
    static func running(_ server: TestServer, clock: TestClock) async throws {
        try await RolloutTests.started(server)
        try await RolloutTests.sendArms(server, clock: clock, units: (200, 200), crashes: (6, 4))
    }

    static func post(
        _ server: TestServer,
        _ path: String,
        as browser: ConsoleTests.Browser,
        _ fields: [String: String] = [:]
    ) async throws -> TestServer.Reply {
        var form = fields
        form["_csrf"] = browser.csrf
        return try await ConsoleTests.request(server, .post, path, form: form, cookie: browser.cookie)
    }

    @Test(arguments: TestDatabase.allCases)
    func thePageShowsThePlanTheTimelineTheGuardrailAndTheDecisionsToAReader(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await Self.running(server, clock: clock)
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let reply = try await viewer.get(server, Self.page)
            #expect(reply.status == .ok)
            let html = reply.text
            #expect(html.contains("step 1 of 3, 10 %"))
            #expect(html.contains(#"<li class="timeline-step timeline-current" aria-current="step">"#))
            #expect(html.contains("the new image cache"))
            #expect(
                html.contains(#"<a class="mono" href="\#(Self.environment)/flags/image_cache/edit">image_cache</a>"#)
            )
            #expect(html.contains("<code class=\"value\">v2</code>"))
            #expect(html.contains("held at least 1 h, and until 50 exposed units per arm"))
            #expect(html.contains("roll back at once"))
            #expect(html.contains("200 treatment and 200 comparison units exposed"))
            // The guardrail: its chart, with its reading in words for screen readers, and the table.
            #expect(
                html.contains(
                    #"<svg class="chart guardrail-chart" role="img" aria-labelledby="guardrail-0-chart-title guardrail-0-chart-desc""#
                )
            )
            #expect(html.contains("app_crashed: treatment − comparison +1.0 pp, 95 % interval"))
            #expect(html.contains("it is not significantly worse"))
            #expect(html.contains(#"<dt>Treatment</dt><dd>3.00 %</dd>"#) && html.contains("<dd>2.00 %</dd>"))
            #expect(html.contains("not significantly worse"))
            #expect(html.contains("holding 10 % for at least 3600 s"), "what the guard sees now")
            #expect(html.contains(#"<th scope="row" data-label="Decision">started</th>"#))
            #expect(html.contains(#"aria-current="page">Rollouts</a>"#), "the environment's tab")
            for control in ["Pause</button>", "Resume</button>", "Stop…", "Roll back…", "Start the rollout"] {
                #expect(!html.contains(control), "a viewer sees no \(control)")
            }

            // The list, and the flag's row and editor, lead to the page.
            let list = try await viewer.get(server, Self.base)
            #expect(list.text.contains(#"<a href="\#(Self.page)" class="mono">image-cache-v2</a>"#))
            #expect(!list.text.contains("New rollout"), "a viewer creates none")
            let flags = try await viewer.get(server, Self.environment + "/flags")
            #expect(
                flags.text.contains(#"<a class="tag flag-rollout" href="\#(Self.page)">rollout image-cache-v2</a>"#)
            )
            let editor = try await viewer.get(server, Self.environment + "/flags/image_cache/edit")
            #expect(
                editor.text.contains(
                    #"<a href="\#(Self.page)">rollout image-cache-v2</a> (running, step 1 of 3, 10 %)"#
                )
            )
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func peopleWhoMayPublishPauseResumeStopAndRollBackWithTheFormToken(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            try await Self.running(server, clock: clock)
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            #expect(try await Self.post(server, Self.page + "/pause", as: viewer).status == .forbidden)
            #expect(
                try await viewer.get(server, Self.page + "/rollback").status
                    == .forbidden
            )
            // An editor of another environment may not either.
            let stranger = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            #expect(try await Self.post(server, Self.page + "/pause", as: stranger).status == .forbidden)

            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let shown = try await admin.get(server, Self.page)
            #expect(shown.text.contains("Pause</button>") && shown.text.contains("Roll back…"))
            let forged = try await ConsoleTests.request(
                server,
                .post,
                Self.page + "/pause",
                form: [:],
                cookie: admin.cookie
            )
            #expect(forged.status == .forbidden, "no form token, no pause")
            #expect(try await RolloutTests.rollout(server)["state"] == "running")

            let paused = try await Self.post(server, Self.page + "/pause", as: admin)
            #expect(paused.status == .seeOther)
            #expect(paused.headers[.location] == Self.page + "?done=paused")
            #expect(try await RolloutTests.rollout(server)["state"] == "paused")
            let pausedPage = try await admin.get(server, Self.page + "?done=paused")
            #expect(pausedPage.text.contains("Resume</button>") && !pausedPage.text.contains("Pause</button>"))
            #expect(pausedPage.text.contains("now, paused"))

            // A second pause is refused with the lifecycle's reason, on the page.
            let again = try await Self.post(server, Self.page + "/pause", as: admin)
            #expect(again.status == .conflict)
            #expect(again.text.contains(#"role="alert""#) && again.text.contains("is paused, so it cannot pause"))

            #expect(
                try await Self.post(server, Self.page + "/resume", as: admin).headers[.location] == Self.page
                    + "?done=resumed"
            )
            #expect(try await RolloutTests.rollout(server)["state"] == "running")

            // Rolling back is confirmed on a page of its own, then published.
            let confirm = try await admin.get(server, Self.page + "/rollback")
            #expect(confirm.status == .ok)
            #expect(confirm.text.contains("Roll back rollout image-cache-v2 at step 1 of 3, 10 %?"))
            #expect(confirm.text.contains(#"<form method="post" action="\#(Self.page)/rollback""#))
            let rolledBack = try await Self.post(
                server,
                Self.page + "/rollback",
                as: admin,
                ["reason": "checkout tickets"]
            )
            #expect(rolledBack.headers[.location] == Self.page + "?done=rolled_back")
            let after = try await RolloutTests.rollout(server)
            #expect(after["state"] == "rolled_back")
            #expect(RolloutTests.actions(after) == ["start", "pause", "resume", "roll_back"])
            let reason = after["decisions"]?.arrayValue?.last?.objectValue?["reason"]?.stringValue ?? ""
            #expect(reason.hasPrefix("rolled back by ") && reason.hasSuffix(": checkout tickets"), "\(reason)")
            #expect(try await RolloutTests.fetch(server, unit: "unit-1").value == "v1", "everyone has the old value")
            let audit = try await server.send(.get, TestServer.demoPath + "/audit?action=rollout.pause")
            #expect(audit.text.contains("admin-"), "the audit log names the person: \(audit.text.prefix(300))")

            // Nothing is left to stop or roll back.
            let ended = try await admin.get(server, Self.page)
            #expect(!ended.text.contains("Stop…") && !ended.text.contains("Roll back…"))
            #expect(try await Self.post(server, Self.page + "/stop", as: admin).status == .conflict)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anUnknownRolloutIsNotFoundOnEveryRoute(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let missing = Self.base + "/nope"
            for path in [missing, missing + "/stop", missing + "/rollback"] {
                let reply = try await admin.get(server, path)
                #expect(reply.status == .notFound, "GET \(path)")
                #expect(reply.text.contains("there is no rollout &quot;nope&quot;"), "GET \(path)")
            }
            for action in ["start", "pause", "resume", "stop", "rollback", "request"] {
                let reply = try await Self.post(server, missing + "/" + action, as: admin, ["title": "t"])
                #expect(reply.status == .notFound, "POST \(action)")
            }
            let elsewhere = try await admin.get(server, "/projects/demo/environments/nowhere/rollouts")
            #expect(elsewhere.status == .notFound)
        }
    }

    /// The form's fields for the plan RolloutTests uses.
    static let form: [String: String] = [
        "id": "image-cache-v2", "description": "the new image cache", "p0_key": "image_cache", "p0_value": "v2",
        "audience": "", "steps": "10, 50, 100", "holdMinutes": "60", "units": "50", "g0_event": "app_crashed",
        "g0_kind": "conversion", "g0_bad": "increase", "g0_margin": "0.002", "onRegression": "roll_back",
        "errorRate": "0.05",
    ]

    @Test(arguments: TestDatabase.allCases)
    func aPlanMadeWithTheFormIsCheckedCreatedAndStarted(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(try await server.publish(RolloutTests.template).status == .ok)
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let blank = try await admin.get(server, Self.base + "/new?flag=image_cache")
            #expect(blank.status == .ok)
            #expect(
                blank.text.contains(#"<option value="image_cache" selected>image_cache</option>"#),
                "the flag it came from"
            )
            #expect(blank.text.contains(#"value="1, 5, 10, 25, 50, 100""#), "the default steps")
            #expect(blank.text.contains(#"<option value="ios_users">ios_users</option>"#), "conditions are audiences")

            var bad = Self.form
            bad["steps"] = "10, 5, 100"
            bad["errorRate"] = "lots"
            let refused = try await Self.post(server, Self.base + "/new", as: admin, bad)
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("Steps (steps[1]): steps must increase"), "\(refused.text.prefix(2_000))")
            #expect(refused.text.contains("Error rate (errorRate)"))
            #expect(refused.text.contains(#"value="10, 5, 100""#), "what was typed stays")
            #expect(
                try await server.send(.get, RolloutTests.path).object?["rollouts"]?.arrayValue == [],
                "nothing stored"
            )

            let created = try await Self.post(server, Self.base + "/new", as: admin, Self.form)
            #expect(created.status == .seeOther, "\(created.text.prefix(2_000))")
            #expect(created.headers[.location] == Self.page + "?done=created")
            let draft = try await RolloutTests.rollout(server)
            #expect(draft["state"] == "draft")
            #expect(draft["guardrails"]?.arrayValue?.first?.objectValue?["margin"] == 0.002)
            #expect(draft["minimumHoldSeconds"] == 3_600)
            let duplicate = try await Self.post(server, Self.base + "/new", as: admin, Self.form)
            #expect(duplicate.status == .badRequest)
            #expect(duplicate.text.contains("already exists"))

            let page = try await admin.get(server, Self.page + "?done=created")
            #expect(page.text.contains("Start the rollout") && !page.text.contains("Request approval"))
            #expect(page.text.contains("None yet: the rollout has not started."))
            let started = try await Self.post(server, Self.page + "/start", as: admin)
            #expect(started.headers[.location] == Self.page + "?done=started")
            #expect(try await RolloutTests.rollout(server)["state"] == "running")

            // Stopping is confirmed on a page of its own; the current share keeps the new value.
            let confirm = try await admin.get(server, Self.page + "/stop")
            #expect(confirm.text.contains("Stop rollout image-cache-v2 at step 1 of 3, 10 %?"))
            let stopped = try await Self.post(server, Self.page + "/stop", as: admin)
            #expect(stopped.headers[.location] == Self.page + "?done=stopped")
            let after = try await RolloutTests.rollout(server)
            #expect(after["state"] == "stopped")
            #expect(RolloutTests.actions(after) == ["start", "stop"])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func underAChangePolicyTheStartIsRequestedForApproval(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(try await server.publish(RolloutTests.template).status == .ok)
            #expect(try await server.send(.post, RolloutTests.path, json: RolloutTests.plan()).status == .created)
            try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/production"])
            let page = try await editor.get(server, Self.page)
            #expect(page.text.contains("Request approval") && !page.text.contains("Start the rollout"))

            // A start sent anyway is refused by the publish's policy check, on the page.
            let direct = try await Self.post(server, Self.page + "/start", as: editor)
            #expect(direct.status == .conflict)
            #expect(try await RolloutTests.rollout(server)["state"] == "draft")

            let requested = try await Self.post(
                server,
                Self.page + "/request",
                as: editor,
                ["title": "Start the cache"]
            )
            #expect(requested.status == .seeOther)
            let location = requested.headers[.location] ?? ""
            #expect(location.hasPrefix(Self.environment + "/change-requests/cr_"), "\(location)")
            let opened = try #require(
                try await server.send(.get, ChangeRequestTests.requests).object?["changeRequests"]?.arrayValue?.first?
                    .objectValue
            )
            #expect(opened["title"] == "Start the cache")
            #expect(opened["change"]?.objectValue?["kind"] == "rollout_start")
            #expect(opened["change"]?.objectValue?["rollout"] == "image-cache-v2")
        }
    }

    @Test func theChartShadesTheWorseSideAndSaysItsReadingInWords() throws {
        let worse = GuardrailChart.Reading(
            event: "app_crashed",
            estimate: 0.02,
            lower: 0.01,
            upper: 0.03,
            margin: 0.005,
            increaseIsBad: true,
            worse: true
        )
        let svg = try #require(GuardrailChart.svg(worse, scale: .percentagePoints, level: "97.5 %", id: "g"))
        #expect(svg.contains(#"<g class="chart-down">"#))
        #expect(svg.contains(#"class="chart-margin""#) && svg.contains(#"class="chart-bad-region""#))
        #expect(
            svg.contains(
                "app_crashed: treatment − comparison +2.0 pp, 97.5 % interval +1.0 pp to +3.0 pp; more is worse, and "
                    + "the treatment counts as worse when the whole interval is above +0.5 pp: it is significantly worse"
            )
        )
        var within = worse
        within.increaseIsBad = false
        within.worse = false
        within.lower = -.infinity
        let calm = try #require(GuardrailChart.svg(within, scale: .percentagePoints, level: "95 %", id: "h"))
        #expect(calm.contains(#"<g class="chart-flat">"#))
        #expect(calm.contains("interval unbounded below to +3.0 pp; less is worse"))
        #expect(calm.components(separatedBy: "chart-arrow").count - 1 == 1, "the unbounded end is an arrow")
        within.estimate = .nan
        #expect(GuardrailChart.svg(within, scale: .percentagePoints, level: "95 %", id: "n") == nil)
        #expect(RolloutsController.duration(3_600) == "1 h" && RolloutsController.duration(5_400) == "1 h 30 min")
        #expect(RolloutsController.duration(90) == "90 s" && RolloutsController.duration(172_800) == "2 d")
    }
}
