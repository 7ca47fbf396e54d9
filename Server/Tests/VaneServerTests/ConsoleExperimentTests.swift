import Foundation
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer

/// The console's experiment pages (issue #15) over real HTTP: the list, the results with their
/// health checks and charts, start and stop with the form token and the right role. The browser
/// tests (scripts/console-test) look at the same pages in Chromium.
@Suite(.timeLimit(.minutes(5))) struct ConsoleExperimentTests {
    static let base = "/projects/demo/environments/production/experiments"

    /// `units` exposures per variant and `converted` checkouts of each variant's first units.
    static func population(
        control: (units: Int, converted: Int),
        treatment: (units: Int, converted: Int)
    )
        -> [JSONValue]
    {
        var events: [JSONValue] = []
        for (variant, counts) in [("control", control), ("new-flow", treatment)] {
            for index in 0..<counts.units {
                let unit = "\(variant)-\(index)"
                events.append(ExperimentResultsTests.exposure("x-\(unit)", unit: unit, variant: variant))
                if index < counts.converted {
                    events.append(ExperimentResultsTests.metric("m-\(unit)", unit: unit, name: "checkout_completed"))
                }
            }
        }
        return events
    }

    /// An app's fetch, so the live version counts as fetched (the health check of exposures
    /// without a fetch stays quiet).
    static func fetch(_ server: TestServer) async throws {
        let key = try await server.createKey(role: "client")
        let fetched = try await server.send(.post, TestServer.demoPath + "/fetch", key: key, json: ["context": [:]])
        #expect(fetched.status == .ok)
    }

    @Test(arguments: TestDatabase.allCases)
    func theResultsPageShowsHealthFiguresAndAChart(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            var definition = ExperimentAPITests.checkout.objectValue ?? [:]
            definition["hypothesis"] = "The <b>new</b> checkout sells more"
            #expect(try await server.send(.post, ExperimentAPITests.path, json: .object(definition)).status == .created)
            #expect(try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start").status == .ok)
            // The population's exposures are an hour old: the experiment ran since before.
            try await EventIngestionTests.backdateStart(server, key: "checkout-button", seconds: 3 * 3_600)
            try await Self.fetch(server)
            try await ExperimentResultsTests.send(
                server,
                Self.population(control: (200, 50), treatment: (200, 150))
            )
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")

            let list = try await viewer.get(server, Self.base)
            #expect(list.status == .ok)
            #expect(list.text.contains(#"<a href="\#(Self.base)/checkout-button" class="mono">checkout-button</a>"#))
            #expect(list.text.contains(#"<span class="tag tag-added">running</span>"#))
            #expect(list.text.contains("The &lt;b&gt;new&lt;/b&gt; checkout sells more"), "text is escaped")
            #expect(list.text.contains(#"aria-current="page">Experiments</a>"#), "the environment's tab")

            let page = try await viewer.get(server, Self.base + "/checkout-button")
            #expect(page.status == .ok)
            #expect(page.text.contains("Every check passes."))
            #expect(page.text.contains("— fits the configured split"))
            #expect(page.text.contains("25.00 %") && page.text.contains("75.00 %"), "the conversion rates")
            #expect(page.text.contains("+50.0 pp"), "75 % against 25 %: 50 percentage points more")
            #expect(page.text.contains("+200.0 %"), "three times as many")
            #expect(page.text.contains("p &lt; 0.0001"))
            #expect(
                page.text.contains(
                    #"<svg class="chart chart-small" role="img" aria-labelledby="metric-0-chart-title metric-0-chart-desc""#
                )
            )
            #expect(page.text.contains(#"<g class="chart-up">"#), "a difference clear of zero is drawn as one")
            #expect(page.text.contains("new-flow: +50.0 pp against control, 95 % interval +"))
            #expect(
                !page.text.contains("Start the experiment") && !page.text.contains("Stop the experiment"),
                "a viewer only reads"
            )
            #expect(!page.text.contains("<b>new</b>"))

            let missing = try await viewer.get(server, Self.base + "/nope")
            #expect(missing.status == .notFound)
        }
    }

    @Test func aSampleRatioMismatchIsTheFirstThingThePageSays() async throws {
        try await TestServer.run(.sqlite) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.fetch(server)
            try await ExperimentResultsTests.send(server, Self.population(control: (300, 30), treatment: (200, 20)))
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await viewer.get(server, Self.base + "/checkout-button")
            let warning = try #require(page.text.range(of: "Read these before any number below."))
            let variants = try #require(page.text.range(of: "<h2 id=\"variants-heading\">"))
            #expect(warning.lowerBound < variants.lowerBound)
            #expect(page.text.contains("sample-ratio mismatch: the exposed units (control 300, new-flow 200)"))
            #expect(!page.text.contains("Every check passes."))
            #expect(page.text.contains(#"<div class="results untrusted">"#), "the results are dimmed")
            #expect(page.text.contains("These results cannot be trusted: the exposed units do not split as configured"))
        }
    }

    /// Presses a page's start or stop button as `browser`: the form with its token.
    static func press(
        _ server: TestServer,
        _ path: String,
        as browser: ConsoleTests.Browser
    ) async throws
        -> TestServer.Reply
    {
        try await ConsoleTests.request(server, .post, path, form: ["_csrf": browser.csrf], cookie: browser.cookie)
    }

    @Test(arguments: TestDatabase.allCases)
    func peopleWhoMayPublishStartAndStopFromThePage(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(
                try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout).status
                    == .created
            )
            let path = Self.base + "/checkout-button"
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let refused = try await Self.press(server, path + "/start", as: viewer)
            #expect(refused.status == .forbidden)

            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let draft = try await admin.get(server, path)
            #expect(draft.text.contains("Start the experiment…"))
            #expect(draft.text.contains("no results yet: no unit has been exposed to the control variant"))
            let forged = try await ConsoleTests.request(server, .post, path + "/start", form: [:], cookie: admin.cookie)
            #expect(forged.status == .forbidden, "no form token, no start")

            let started = try await Self.press(server, path + "/start", as: admin)
            #expect(started.status == .seeOther)
            #expect(started.headers[.location] == path + "?done=started")
            let running = try await admin.get(server, path + "?done=started")
            #expect(running.text.contains("Started: exposures and events count from now on."))
            #expect(running.text.contains("Stop the experiment"))
            #expect(
                try await server.send(.get, ExperimentAPITests.path + "/checkout-button").object?["status"] == "running"
            )

            // A second start is refused with the store's reason, on the page.
            let again = try await Self.press(server, path + "/start", as: admin)
            #expect(again.status == .conflict)
            #expect(again.text.contains(#"role="alert""#) && again.text.contains("running"))

            let stopped = try await Self.press(server, path + "/stop", as: admin)
            #expect(stopped.headers[.location] == path + "?done=stopped")
            let audit = try await server.send(.get, "/v1/audit?action=experiment.stop")
            #expect(audit.text.contains("stopped experiment checkout-button"), "\(audit.text)")
        }
    }

    /// The form's fields for checkout-button as the API's `checkout` defines it, Bayesian.
    static let checkoutForm: [String: String] = [
        "key": "checkout-button",
        "hypothesis": "The new checkout raises completed checkouts",
        "parameter.checkout_variant": "on",
        "variant.0.name": "control", "variant.0.condition": "", "variant.0.weight": "50",
        "variant.1.name": "new-flow", "variant.1.condition": "checkout_test_b", "variant.1.weight": "50",
        "variant.2.name": "", "variant.2.condition": "", "variant.2.weight": "",
        "metric.0.event": "checkout_completed", "metric.0.kind": "conversion",
        "metric.1.event": "revenue", "metric.1.kind": "ratio", "metric.1.denominator": "session_started",
        "metric.2.event": "", "metric.2.kind": "conversion",
        "method": "bayesian", "confidenceLevel": "0.9",
    ]

    @Test(arguments: TestDatabase.allCases)
    func anExperimentIsCreatedWithTheFormAndRefusedAsTheAPIRefusesIt(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            #expect(
                try await viewer.get(server, Self.base + "/new").status
                    == .forbidden
            )
            let list = try await viewer.get(server, Self.base)
            #expect(!list.text.contains(">New experiment</a>"), "a viewer is not offered the form")

            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let form = try await admin.get(server, Self.base + "/new")
            #expect(form.status == .ok)
            #expect(form.text.contains(#"name="parameter.checkout_variant" value="on""#))
            #expect(
                form.text.contains(
                    #"<option value="checkout_test_b">checkout_test_b: percent(&#39;checkout_test&#39;) between 50 and 100</option>"#
                ),
                "the template's percent condition is offered"
            )
            #expect(!form.text.contains(#"<option value="germany_austria""#), "a targeting condition is not offered")

            // Without a primary metric: the reader's words, with the path, and the fields kept.
            var missing = Self.checkoutForm
            missing["metric.0.event"] = ""
            missing["_csrf"] = admin.csrf
            let refused = try await ConsoleTests.request(server, .post, Self.base, form: missing, cookie: admin.cookie)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("The experiment was not created: 1 problem."))
            #expect(
                refused.text.contains(
                    #"<span class="mono">primaryMetric</span>: required: the metric the experiment is decided on"#
                )
            )
            #expect(refused.text.contains(#"value="checkout-button""#), "what was typed stays")
            let api = try await server.send(
                .post,
                ExperimentAPITests.path,
                json: [
                    "key": "x", "parameters": ["checkout_variant"],
                    "variants": [
                        ["name": "a", "weight": 1], ["name": "b", "condition": "checkout_test_b", "weight": 1],
                    ],
                ]
            )
            #expect(
                api.errorMessage?.contains("primaryMetric: required: the metric the experiment is decided on") == true
            )

            // A targeting condition sent as a variant (the form does not offer it): refused by the shared check.
            var targeted = Self.checkoutForm
            targeted["parameter.banner_text"] = "on"
            targeted["variant.2.name"] = "german"
            targeted["variant.2.condition"] = "germany_austria"
            targeted["variant.2.weight"] = "50"
            targeted["_csrf"] = admin.csrf
            let notSplit = try await ConsoleTests.request(
                server,
                .post,
                Self.base,
                form: targeted,
                cookie: admin.cookie
            )
            #expect(notSplit.status == .unprocessableContent)
            #expect(
                notSplit.text.contains(
                    "variants[2].condition</span>: variant &quot;german&quot;: condition &quot;germany_austria&quot; tests "
                        + "device.country, a targeting rule, not a random split"
                ),
                "\(notSplit.text)"
            )

            var valid = Self.checkoutForm
            valid["_csrf"] = admin.csrf
            let created = try await ConsoleTests.request(server, .post, Self.base, form: valid, cookie: admin.cookie)
            #expect(created.status == .seeOther)
            #expect(created.headers[.location] == Self.base + "/checkout-button?done=created")
            let stored = try #require(try await server.send(.get, ExperimentAPITests.path + "/checkout-button").object)
            #expect(stored["status"] == "draft")
            #expect(stored["method"] == "bayesian")
            #expect(stored["controlVariant"] == "control")
            #expect(stored["confidenceLevel"]?.numberValue?.value == 0.9)
            #expect(
                stored["guardrailMetrics"]?.arrayValue?.first?.objectValue?["denominatorEvent"] == "session_started"
            )
            let page = try await admin.get(server, Self.base + "/checkout-button?done=created")
            #expect(page.text.contains("Created as a draft"))
            #expect(page.text.contains("No data yet: the experiment has not started"))
            #expect(!page.text.contains("Every check passes."), "nothing was checked")
            let again = try await ConsoleTests.request(server, .post, Self.base, form: valid, cookie: admin.cookie)
            #expect(again.status == .unprocessableContent)
            #expect(again.text.contains("an experiment &quot;checkout-button&quot; already exists"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func startAndStopAskFirstAndUnderAPolicyOpenAChangeRequest(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(
                try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout).status
                    == .created
            )
            let path = Self.base + "/checkout-button"
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let draft = try await admin.get(server, path)
            #expect(draft.text.contains(#"<a class="button primary" href="\#(path)/start">Start the experiment…</a>"#))
            let confirmStart = try await admin.get(server, path + "/start")
            #expect(confirmStart.status == .ok)
            #expect(confirmStart.text.contains("Start checkout-button?"))
            #expect(
                confirmStart.text.contains(
                    "The definition (variants, split, metrics, method) cannot change after the start"
                )
            )
            #expect(confirmStart.text.contains(#"<form method="post" action="\#(path)/start""#))
            let early = try await admin.get(server, path + "/stop")
            #expect(early.status == .seeOther, "a draft has nothing to stop: back to its page")

            #expect(
                try await Self.press(server, path + "/start", as: admin).headers[.location] == path + "?done=started"
            )
            let running = try await admin.get(server, path)
            #expect(running.text.contains("No data yet: no unit has been exposed since the start"))
            let confirmStop = try await admin.get(server, path + "/stop")
            #expect(confirmStop.text.contains("Stop checkout-button for good?"))
            #expect(confirmStop.text.contains("This cannot be undone: a stopped experiment does not start again."))
            #expect(
                confirmStop.text.contains(
                    #"<button type="submit" class="danger">Stop the experiment for good</button>"#
                )
            )

            // Under a policy the confirmation says so, and confirming opens a request instead.
            try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
            let policed = try await admin.get(server, path + "/stop")
            #expect(policed.text.contains("confirming opens a change request to stop checkout-button"))
            #expect(policed.text.contains("Request the stop"))
            let requested = try await Self.press(server, path + "/stop", as: admin)
            #expect(requested.status == .seeOther)
            #expect(requested.headers[.location]?.contains("/change-requests/cr_") == true, "\(requested.headers)")
            #expect(requested.headers[.location]?.hasSuffix("?opened=1") == true)
            #expect(
                try await server.send(.get, ExperimentAPITests.path + "/checkout-button").object?["status"] == "running"
            )
            let opened = try await server.send(.get, ChangeRequestTests.requests)
            let change = opened.object?["changeRequests"]?.arrayValue?.first?.objectValue?["change"]?.objectValue
            #expect(change?["kind"] == "experiment_stop")
            #expect(change?["experiment"] == "checkout-button")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func bayesianResultsShowTheExpectedLossAndHowLongToADecision(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            var definition = ExperimentAPITests.checkout.objectValue ?? [:]
            definition["method"] = "bayesian"
            #expect(try await server.send(.post, ExperimentAPITests.path, json: .object(definition)).status == .created)
            #expect(try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start").status == .ok)
            try await EventIngestionTests.backdateStart(server, key: "checkout-button", seconds: 3 * 3_600)
            try await Self.fetch(server)
            // 25 % against 30 %: (z₀.₉₇₅ + z₀.₈)² (0.1875 + 0.21) / 0.05² = 1,247.97 units per variant;
            // 200 in 3 hours is about 1,600 a day, so the other 1,048 take under a day.
            try await ExperimentResultsTests.send(server, Self.population(control: (200, 50), treatment: (200, 60)))
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await viewer.get(server, Self.base + "/checkout-button")
            #expect(page.text.contains(#"<th scope="col">Expected loss</th>"#))
            #expect(page.text.contains(#"<td data-label="Expected loss">"#))
            #expect(page.text.contains("How long to a decision"))
            #expect(
                page.text.contains(
                    "new-flow: detecting the observed difference (+5.0 pp) with 80 % power at 95 % takes about 1,248 "
                        + "units per variant; at the current 1,"
                ),
                "\(page.text)"
            )
            // The pace is 1,600 units a day less the seconds the test took since the backdated start.
            #expect(page.text.contains(" units per variant a day, about 1 more day."))
            #expect(!page.text.contains("results untrusted"))
        }
    }

    @Test func theChartDrawsUnboundedIntervalsAsArrowsAndEscapesLabels() throws {
        let svg = try #require(
            ExperimentChart.svg(
                rows: [
                    .init(label: "a<b", estimate: 0.1, lower: -.infinity, upper: 0.3),
                    .init(label: "down", estimate: -0.2, lower: -0.3, upper: -0.1),
                ],
                scale: .percentagePoints,
                id: "c",
                title: "t & u"
            )
        )
        #expect(svg.contains("a&lt;b") && !svg.contains("a<b"))
        #expect(svg.contains("<title id=\"c-title\">t &amp; u</title>"))
        #expect(svg.components(separatedBy: "chart-arrow").count - 1 == 1, "one unbounded end, one arrow")
        #expect(svg.contains("<g class=\"chart-flat\">") && svg.contains("<g class=\"chart-down\">"))
        #expect(svg.contains("interval unbounded below to +30.0 pp"))
        #expect(ExperimentChart.Scale.number(decimals: 2).format(-1.234) == "−1.23")
        #expect(ExperimentChart.Scale.percentagePoints.format(0.0001) == "0 pp")
        let (low, high) = ExperimentChart.domain([.init(label: "x", estimate: 0.05, lower: 0.02, upper: 0.08)])
        #expect(low < 0 && high > 0.08, "zero is always on the axis")
        #expect(
            ExperimentChart.svg(
                rows: [.init(label: "x", estimate: .nan, lower: 0, upper: 1)],
                scale: .percentagePoints,
                id: "n",
                title: ""
            )
                == nil
        )
    }
}
