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

            let list = try await ConsoleTests.request(server, .get, Self.base, cookie: viewer.cookie)
            #expect(list.status == .ok)
            #expect(list.text.contains(#"<a href="\#(Self.base)/checkout-button" class="mono">checkout-button</a>"#))
            #expect(list.text.contains(#"<span class="tag tag-added">running</span>"#))
            #expect(list.text.contains("The &lt;b&gt;new&lt;/b&gt; checkout sells more"), "text is escaped")
            #expect(list.text.contains(#"aria-current="page">Experiments</a>"#), "the environment's tab")

            let page = try await ConsoleTests.request(
                server,
                .get,
                Self.base + "/checkout-button",
                cookie: viewer.cookie
            )
            #expect(page.status == .ok)
            #expect(page.text.contains("Every check passes."))
            #expect(page.text.contains("— fits the configured split"))
            #expect(page.text.contains("25.00 %") && page.text.contains("75.00 %"), "the conversion rates")
            #expect(page.text.contains("+50.0 pp"), "75 % against 25 %: 50 percentage points more")
            #expect(page.text.contains("+200.0 %"), "three times as many")
            #expect(page.text.contains("p &lt; 0.0001"))
            #expect(
                page.text.contains(
                    #"<svg class="chart" role="img" aria-labelledby="metric-0-chart-title metric-0-chart-desc""#
                )
            )
            #expect(page.text.contains(#"<g class="chart-up">"#), "a difference clear of zero is drawn as one")
            #expect(page.text.contains("new-flow: +50.0 pp against control, 95 % interval +"))
            #expect(
                !page.text.contains("Start the experiment") && !page.text.contains("Stop the experiment"),
                "a viewer only reads"
            )
            #expect(!page.text.contains("<b>new</b>"))

            let missing = try await ConsoleTests.request(server, .get, Self.base + "/nope", cookie: viewer.cookie)
            #expect(missing.status == .notFound)
        }
    }

    @Test func aSampleRatioMismatchIsTheFirstThingThePageSays() async throws {
        try await TestServer.run(.sqlite) { server in
            try await EventIngestionTests.startExperiment(server)
            try await Self.fetch(server)
            try await ExperimentResultsTests.send(server, Self.population(control: (300, 30), treatment: (200, 20)))
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await ConsoleTests.request(
                server,
                .get,
                Self.base + "/checkout-button",
                cookie: viewer.cookie
            )
            let warning = try #require(page.text.range(of: "Read these before any number below."))
            let variants = try #require(page.text.range(of: "<h2 id=\"variants-heading\">"))
            #expect(warning.lowerBound < variants.lowerBound)
            #expect(page.text.contains("sample-ratio mismatch: the exposed units (control 300, new-flow 200)"))
            #expect(!page.text.contains("Every check passes."))
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
            let draft = try await ConsoleTests.request(server, .get, path, cookie: admin.cookie)
            #expect(draft.text.contains("Start the experiment"))
            #expect(draft.text.contains("no results yet: no unit has been exposed to the control variant"))
            let forged = try await ConsoleTests.request(server, .post, path + "/start", form: [:], cookie: admin.cookie)
            #expect(forged.status == .forbidden, "no form token, no start")

            let started = try await Self.press(server, path + "/start", as: admin)
            #expect(started.status == .seeOther)
            #expect(started.headers[.location] == path + "?done=started")
            let running = try await ConsoleTests.request(server, .get, path + "?done=started", cookie: admin.cookie)
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
