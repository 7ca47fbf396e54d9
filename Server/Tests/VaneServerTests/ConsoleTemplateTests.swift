import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import VaneServerCore

@testable import VaneConsole
@testable import VaneServer

/// A console page cannot render blank by accident: every template is rendered with page data
/// built by its own handler, and every name a template reads must be in that data
/// (swift-mustache would render a missing one as nothing). Templates the server cannot start
/// without are refused when the assets are prepared.
@Suite(.timeLimit(.minutes(5))) struct ConsoleTemplateTests {
    /// Every page's template and data, as the console's handlers rendered them.
    final class Pages: Sendable {
        let rendered = Mutex<[(template: ConsoleTemplate, data: [String: any Sendable])]>([])
    }

    /// The pages of every console screen and their states — data and none, flash messages,
    /// errors, new secrets — with the demo project, a published change, a draft and a running
    /// experiment with results, seen by an admin.
    static func renderEveryPage(_ server: TestServer) async throws -> Pages {
        // An experiment with results, a published change (history, diff, rollback) and a draft.
        #expect(
            try await server.send(.post, ExperimentAPITests.path, json: ExperimentAPITests.checkout).status == .created
        )
        #expect(try await server.send(.post, ExperimentAPITests.path + "/checkout-button/start").status == .ok)
        try await EventIngestionTests.backdateStart(server, key: "checkout-button", seconds: 3 * 3_600)
        try await ConsoleExperimentTests.fetch(server)
        try await ExperimentResultsTests.send(
            server,
            ConsoleExperimentTests.population(control: (200, 50), treatment: (200, 150))
        )
        let switched = try await server.send(
            .post,
            FlagSwitchAPITests.switchPath,
            json: ["to": "off", "message": "outage"]
        )
        #expect(switched.status == .ok)
        let admin = try await ConsoleTests.signIn(server, role: "admin")

        let pages = Pages()
        let application = server.application
        let router = Router(context: VaneRequestContext.self)
        ConsoleAccessTests.console(
            of: application,
            renderer: ConsolePageRenderer(assets: application.consoleAssets) { template, data in
                pages.rendered.withLock { $0.append((template, data)) }
            }
        ).register(on: router)
        try await Application(router: router).test(.live) { live in
            try await LoopbackClient.with(live) { client in
                let console = TestServer(client: client, application: application)
                let environment = "/projects/demo/environments/production"
                func get(_ path: String, status: HTTPResponse.Status = .ok, signedIn: Bool = true) async throws {
                    let reply = try await ConsoleTests.request(
                        console,
                        .get,
                        path,
                        cookie: signedIn ? admin.cookie : nil
                    )
                    #expect(reply.status == status, "GET \(path)")
                }
                func post(_ path: String, _ form: [String: String], status: HTTPResponse.Status) async throws {
                    var form = form
                    form["_csrf"] = admin.csrf
                    let reply = try await ConsoleTests.request(console, .post, path, form: form, cookie: admin.cookie)
                    #expect(reply.status == status, "POST \(path)")
                }
                try await get("/sign-in", signedIn: false)
                try await post("/sign-in", ["email": "nobody@example.com", "password": "wrong"], status: .unauthorized)
                try await get("/")
                try await get("/account")
                try await get("/audit")
                try await get("/audit?flag=payments_enabled")
                try await get("/keys")
                try await post(
                    "/keys",
                    ["name": "ios", "role": "client", "environment": "demo/production"],
                    status: .ok
                )
                try await get("/users")
                try await post("/users", ["email": "new@example.com", "role": "viewer"], status: .ok)
                let users = try await application.accounts.store.users()
                try await get("/users/" + (users.first { $0.email == "new@example.com" }?.id ?? "x"))
                try await get(environment + "/flags")
                try await get(environment + "/flags?q=payments")
                try await get(environment + "/flags/new")
                try await get(environment + "/flags/banner_text/edit")
                try await get(environment + "/flags/payments_enabled/switch?to=on")
                try await get(environment + "/flags/banner_text/copy")
                try await get("/projects/demo/environments/staging/copy?from=production&flag=payments_enabled")
                try await get(environment + "/history")
                try await get(environment + "/diff?from=1&to=2")
                try await get(environment + "/rollback?version=1")
                try await get(environment + "/rollback?version=1&flag=payments_enabled")
                try await get(environment + "/conditions")
                try await get(environment + "/conditions/new")
                try await get(environment + "/conditions/germany_austria/edit")
                try await post(
                    environment + "/conditions/new",
                    ["name": "bad one", "expression": "device.os == ios"],
                    status: .badRequest
                )
                try await post(
                    environment + "/conditions/new",
                    ["name": "ios_users", "expression": "true"],
                    status: .seeOther
                )
                // A value germany_austria shadows: the editor and the review show it with its move.
                try await post(
                    environment + "/conditions/new",
                    ["name": "germans", "expression": "device.country in ['de']"],
                    status: .seeOther
                )
                try await post(
                    environment + "/flags/banner_text/edit",
                    [
                        "type": "STRING", "default_mode": "value", "default_value": "Hi", "description": "",
                        "c0_name": "germany_austria", "c0_mode": "value", "c0_value": "Hallo",
                        "c4_name": "germans", "c4_mode": "value", "c4_value": "Servus",
                    ],
                    status: .seeOther
                )
                try await get(environment + "/flags/banner_text/edit")
                try await get(environment + "/review")
                try await get(environment + "/flags")
                try await get(environment + "/evaluate")
                try await get(environment + "/evaluate?country=DE&compare=draft")
                try await get(environment + "/experiments")
                try await get(environment + "/experiments/checkout-button")
                try await get(environment + "/experiments/new")
                try await post(environment + "/experiments", ["key": "no-metric"], status: .unprocessableContent)
                try await get(environment + "/experiments/checkout-button/stop")
                // Rollouts: a running one with a reading, its confirmations, the list, the form and its problems.
                var plan = try #require(RolloutTests.plan(id: "payments-off").objectValue)
                plan["parameters"] = [["key": "payments_enabled", "value": "false"]]
                #expect(try await server.send(.post, RolloutTests.path, json: .object(plan)).status == .created)
                #expect(try await server.send(.post, RolloutTests.path + "/payments-off/start").status == .ok)
                try await get(environment + "/rollouts")
                try await get(environment + "/rollouts/payments-off")
                try await get(environment + "/rollouts/payments-off/stop")
                try await get(environment + "/rollouts/payments-off/rollback")
                try await get(environment + "/rollouts/new?flag=banner_text")
                try await post(environment + "/rollouts/new", ["id": "Bad Id"], status: .badRequest)
                try await get(environment + "/flags/payments_enabled/edit")
                // Webhooks: an endpoint (stored directly: this server refuses loopback URLs, which the
                // form's refusal shows), its deliveries, and a rotated secret shown once.
                let endpoint = try await WebhookStore(engine: application.store.engine).createEndpoint(
                    projectId: "demo",
                    url: "https://hooks.example.com/vane",
                    description: "CI",
                    events: WebhookEventType.allCases,
                    enabled: true,
                    secret: WebhookSignature.generateSecret(),
                    actor: Actor(keyId: "k_test", name: "test")
                )
                try await post(
                    "/projects/demo/webhooks",
                    ["url": "http://127.0.0.1:9/hook", "event.version.published": "on"],
                    status: .badRequest
                )
                try await post("/projects/demo/webhooks/\(endpoint.id)/rotate-secret", [:], status: .ok)
                // A change request from the draft under a policy, refused self-approval, another's
                // approval and the apply.
                try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
                try await post(
                    environment + "/flags/banner_text/edit",
                    ["type": "STRING", "default_mode": "value", "default_value": "Request me", "description": ""],
                    status: .seeOther
                )
                try await get(environment + "/review")
                let live = try #require(try await ChangeRequestTests.liveVersion(server))
                try await post(
                    environment + "/review/request",
                    ["title": "New banner", "live": live],
                    status: .seeOther
                )
                try await get("/projects/demo/webhooks")
                try await get(environment + "/change-requests")
                try await get(environment + "/change-requests?view=mine")
                let opened = try #require(
                    try await server.send(.get, ChangeRequestTests.requests).object?["changeRequests"]?.arrayValue?
                        .first?
                        .objectValue
                )
                let id = try #require(opened["id"]?.stringValue)
                let hash = try #require(opened["contentHash"]?.stringValue)
                try await get(environment + "/change-requests/" + id)
                try await post(
                    environment + "/change-requests/\(id)/review",
                    ["decision": "approve", "contentHash": hash],
                    status: .forbidden
                )
                let reviewer = try await ChangeRequestTests.reviewer(server)
                try await ChangeRequestTests.review(server, id, "approve", hash: hash, key: reviewer.key)
                try await post(environment + "/change-requests/\(id)/apply", [:], status: .ok)
                try await get(environment + "/change-requests?view=history")
                try await get("/projects/demo/environments/nowhere/flags", status: .notFound)
            }
        }
        return pages
    }

    @Test(arguments: TestDatabase.allCases)
    func everyTemplateReadsOnlyNamesItsPageHas(database: TestDatabase) async throws {
        // The API's connection waits while the console's own client renders every page, which on
        // a loaded machine takes longer than the 30 s a silent connection is kept by default.
        let body: @Sendable (TestServer) async throws -> Void = { server in
            let pages = try await Self.renderEveryPage(server)
            var check = try ConsoleTemplateNameCheck(sources: EmbeddedConsoleAssets.files)
            for (template, data) in pages.rendered.withLock({ $0 }) {
                check.check(template.rawValue, data: data)
            }
            #expect(check.problems.sorted() == [], "names the templates read that their pages lack")
            let unrendered = Set(ConsoleTemplate.allCases.map(\.rawValue)).subtracting(check.renderedTemplates)
            #expect(unrendered.sorted() == [], "templates no page rendered: give them a page in renderEveryPage")
            let files = Set(check.templates.keys)
            #expect(files == Set(ConsoleTemplate.allCases.map(\.rawValue)), "ConsoleTemplate names every template file")
        }
        try await TestServer.run(database, configure: { $0.idleTimeoutSeconds = 3_600 }, body)
    }

    @Test func theCheckFindsANameThePageLacks() throws {
        struct Page: Sendable {
            var title: String
            var rows: [String]
            var note: String?
        }
        var check = try ConsoleTemplateNameCheck(sources: [
            "templates/page.mustache":
                "{{#page}}{{title}}{{#rows}}{{.}}{{titel}}{{/rows}}{{#note}}{{note}}{{/note}}{{/page}}"
        ])
        check.check("page", data: ["page": Page(title: "t", rows: ["a"], note: nil)] as [String: any Sendable])
        #expect(check.problems == ["page.mustache: {{titel}}"])
        #expect(check.unreached == ["page.mustache: {{note}}"])
    }

    @Test func aMissingOrBrokenTemplateStopsTheStart() throws {
        var sources = EmbeddedConsoleAssets.files
        sources["templates/flags.mustache"] = nil
        #expect {
            try ConsoleAssets(sources: sources)
        } throws: { error in
            "\(error)".contains("templates/flags.mustache is missing")
        }
        sources = EmbeddedConsoleAssets.files
        sources["templates/flags.mustache"] = "{{#page}}unclosed"
        #expect {
            try ConsoleAssets(sources: sources)
        } throws: { error in
            "\(error)".contains("templates/flags.mustache cannot be parsed")
        }
        sources = EmbeddedConsoleAssets.files
        sources["templates/keys.mustache"] = "{{<layuot}}{{/layuot}}"
        #expect {
            try ConsoleAssets(sources: sources)
        } throws: { error in
            "\(error)".contains("uses the template \"layuot\"")
        }
    }
}
