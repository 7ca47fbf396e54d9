import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The console's change requests and webhooks over real HTTP, on both databases: a draft sent
/// for review under a policy publishes nothing, reviews are refused to viewers and to authors of
/// their own request, another person's approval lets the author apply, and the webhooks page
/// shows a secret once. The rules are the store's (ChangeRequestTests covers them over the API);
/// these check that the console reaches them and shows their outcome.
@Suite(.timeLimit(.minutes(5))) struct ConsoleChangeRequestTests {
    static let production = ConsoleDraftTests.production

    /// One approval required, authors may not approve their own.
    static func requireApproval(_ server: TestServer) async throws {
        try await ChangeRequestTests.setPolicy(server, ["required": true, "approvals": 1])
    }

    /// Saves a draft changing `banner_text` and sends it for review from the review page;
    /// answers the request's id from the redirect.
    static func requestReview(
        _ server: TestServer,
        _ author: ConsoleTests.Browser,
        banner: String
    ) async throws -> String {
        let saved = try await Self.submit(
            server,
            production + "/flags/banner_text/edit",
            ConsoleDraftTests.editorForm(author, type: "STRING", defaultValue: banner),
            as: author
        )
        #expect(saved.status == .seeOther, "\(saved.text)")
        let live = try #require(try await ChangeRequestTests.liveVersion(server))
        let requested = try await Self.submit(
            server,
            production + "/review/request",
            ["_csrf": author.csrf, "live": live, "title": "New banner", "description": "For the sale"],
            as: author
        )
        #expect(requested.status == .seeOther, "\(requested.text)")
        let location = try #require(requested.headers[.location])
        let prefix = production + "/change-requests/"
        #expect(location.hasPrefix(prefix) && location.hasSuffix("?opened=1"), "\(location)")
        return String(location.dropFirst(prefix.count).prefix { $0 != "?" })
    }

    /// A console page as `browser` sees it.
    static func page(
        _ server: TestServer,
        _ path: String,
        as browser: ConsoleTests.Browser
    ) async throws
        -> TestServer.Reply
    {
        try await ConsoleTests.request(server, .get, path, cookie: browser.cookie)
    }

    /// A console form posted by `browser` (the form carries its own `_csrf`).
    static func submit(
        _ server: TestServer,
        _ path: String,
        _ form: [String: String],
        as browser: ConsoleTests.Browser
    ) async throws -> TestServer.Reply {
        try await ConsoleTests.request(server, .post, path, form: form, cookie: browser.cookie)
    }

    static func changeRequest(_ server: TestServer, _ id: String) async throws -> JSONObject {
        try #require(try await server.send(.get, ChangeRequestTests.requests + "/" + id).object)
    }

    @Test(arguments: TestDatabase.allCases)
    func requestReviewOpensAChangeRequestAndPublishesNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            // Without a policy the draft publishes as before.
            _ = try await Self.submit(
                server,
                Self.production + "/flags/banner_text/edit",
                ConsoleDraftTests.editorForm(ana, type: "STRING", defaultValue: "Spring"),
                as: ana
            )
            let open = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(open.text.contains(">Publish</button>"))
            #expect(!open.text.contains("Request review</button>"))

            try await Self.requireApproval(server)
            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(review.text.contains("Request review</button>"))
            #expect(!review.text.contains(">Publish</button>"))
            #expect(review.text.contains("1 approval each"))
            #expect(review.text.contains("Authors may not approve their own requests"))
            let before = try await ChangeRequestTests.liveVersion(server)

            let id = try await Self.requestReview(server, ana, banner: "Summer")
            let opened = try await Self.changeRequest(server, id)
            #expect(opened["state"] == "in_review")
            #expect(opened["title"] == "New banner")
            #expect(opened["description"] == "For the sale")
            #expect(opened["author"]?.stringValue?.hasPrefix("editor-") == true)
            let proposed = opened["change"]?.objectValue?["template"]?.objectValue
            #expect(ConsoleDraftTests.defaultValue(try #require(proposed), "banner_text") == "Summer")
            // Nothing went live, and the draft now lives in the request.
            #expect(try await ChangeRequestTests.liveVersion(server) == before)
            #expect(
                ConsoleDraftTests.defaultValue(try await ConsoleDraftTests.liveTemplate(server), "banner_text")
                    != "Summer"
            )
            let after = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(after.text.contains("You have no draft"))
            // Its review page shows the diff that will apply and the sample of users it changes.
            let page = try await Self.page(server, Self.production + "/change-requests/\(id)?opened=1", as: ana)
            #expect(page.status == .ok)
            #expect(page.text.contains("Change request opened"))
            #expect(page.text.contains("banner_text"))
            #expect(page.text.contains("Summer"))
            #expect(page.text.contains("Who would see a different value"))
            #expect(page.text.contains("0 of 1"))
            // The list's open tab has it with its approvals and base version.
            let list = try await Self.page(server, Self.production + "/change-requests", as: ana)
            #expect(list.text.contains("New banner"))
            #expect(list.text.contains("0/1"))
            #expect(list.text.contains("In review"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aViewerCannotReviewAndAnAuthorCannotApproveTheirOwn(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.requireApproval(server)
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let id = try await Self.requestReview(server, ana, banner: "Autumn")
            let hash = try #require(try await Self.changeRequest(server, id)["contentHash"]?.stringValue)
            let path = Self.production + "/change-requests/\(id)"

            // The author's page offers no approval and says why.
            let own = try await ConsoleTests.request(server, .get, path, cookie: ana.cookie)
            #expect(!own.text.contains("value=\"approve\""))
            #expect(own.text.contains("Authors may not approve or reject their own change requests"))
            #expect(own.text.contains("Cancel the request"))
            // Sent anyway, the store refuses it.
            let selfApproval = try await Self.submit(
                server,
                path + "/review",
                ["_csrf": ana.csrf, "decision": "approve", "contentHash": hash],
                as: ana
            )
            #expect(selfApproval.status == .forbidden)
            #expect(selfApproval.text.contains("Authors may not approve or reject their own change requests"))

            // A viewer reads the request but has no form, and a sent one is refused.
            let read = try await ConsoleTests.request(server, .get, path, cookie: viewer.cookie)
            #expect(read.status == .ok)
            #expect(!read.text.contains(path + "/review"))
            let mine = try await Self.page(server, Self.production + "/change-requests?view=mine", as: viewer)
            #expect(!mine.text.contains("New banner"))
            let approval = try await Self.submit(
                server,
                path + "/review",
                ["_csrf": viewer.csrf, "decision": "approve", "contentHash": hash],
                as: viewer
            )
            #expect(approval.status == .forbidden)

            let request = try await Self.changeRequest(server, id)
            #expect(request["state"] == "in_review")
            #expect(request["reviews"]?.arrayValue?.isEmpty == true)
            // Nor may anyone apply it before it is approved.
            let early = try await Self.submit(server, path + "/apply", ["_csrf": ana.csrf], as: ana)
            #expect(early.status == .conflict)
            #expect(early.text.contains("is not approved"))
            #expect(try await Self.changeRequest(server, id)["state"] == "in_review")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aScheduledRequestShowsWhenItApplies(database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(database, clock: clock) { server in
            let reviewer = try await ScheduledChangeTests.governed(server)
            let id = try await ScheduledChangeTests.approved(
                server,
                try await ChangeRequestTests.template(server, banner: "Monday launch"),
                reviewer: reviewer,
                title: "Monday launch"
            )
            // Minutes dropped: the console shows times to the minute.
            let due = Date(timeIntervalSince1970: (clock.now.timeIntervalSince1970 / 60).rounded(.down) * 60 + 7200)
            #expect(try await ScheduledChangeTests.schedule(server, id, at: due).status == .ok)
            let shown = ChangeRequestsController.displayTime(Clock.milliseconds(due))
            let ana = try await ConsoleTests.signIn(server, role: "viewer", environments: [])
            let list = try await Self.page(server, Self.production + "/change-requests?view=scheduled", as: ana)
            #expect(list.text.contains("Monday launch"))
            #expect(list.text.contains("applies \(shown)"), "the scheduled tab says when: \(shown)")
            let page = try await Self.page(server, Self.production + "/change-requests/\(id)", as: ana)
            #expect(page.text.contains("<dt>Applies at</dt><dd>\(shown)</dd>"), "\(page.text)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anotherPersonApprovesAndTheAuthorApplies(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.requireApproval(server)
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let ben = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let id = try await Self.requestReview(server, ana, banner: "Winter")
            let hash = try #require(try await Self.changeRequest(server, id)["contentHash"]?.stringValue)
            let path = Self.production + "/change-requests/\(id)"
            let before = try #require(try await ChangeRequestTests.liveVersion(server).flatMap { Int64($0) })

            // Ben has it to review; Ana does not (her own).
            let bens = try await Self.page(server, Self.production + "/change-requests?view=mine", as: ben)
            #expect(bens.text.contains("New banner"))
            let anas = try await Self.page(server, Self.production + "/change-requests?view=mine", as: ana)
            #expect(!anas.text.contains("New banner"))

            let approved = try await Self.submit(
                server,
                path + "/review",
                ["_csrf": ben.csrf, "decision": "approve", "contentHash": hash, "comment": "Looks right"],
                as: ben
            )
            #expect(approved.status == .seeOther, "\(approved.text)")
            #expect(approved.headers[.location] == path + "?reviewed=approve")
            let request = try await Self.changeRequest(server, id)
            #expect(request["state"] == "approved")
            #expect(request["reviews"]?.arrayValue?.first?.objectValue?["comment"] == "Looks right")
            // Approval alone publishes nothing.
            #expect(try await ChangeRequestTests.liveVersion(server) == String(before))

            let page = try await ConsoleTests.request(server, .get, path, cookie: ana.cookie)
            #expect(page.text.contains("Looks right"))
            #expect(page.text.contains(">Apply</button>"))
            let applied = try await Self.submit(server, path + "/apply", ["_csrf": ana.csrf], as: ana)
            #expect(applied.status == .ok, "\(applied.text)")
            #expect(applied.text.contains("Applied: version \(before + 1) is live."))
            #expect(try await ChangeRequestTests.liveVersion(server) == String(before + 1))
            #expect(
                ConsoleDraftTests.defaultValue(try await ConsoleDraftTests.liveTemplate(server), "banner_text")
                    == "Winter"
            )
            let done = try await Self.changeRequest(server, id)
            #expect(done["state"] == "applied")
            #expect(done["appliedVersion"] == .string(String(before + 1)))
            // It applies once.
            let again = try await Self.submit(server, path + "/apply", ["_csrf": ana.csrf], as: ana)
            #expect(again.status == .conflict)
            #expect(try await ChangeRequestTests.liveVersion(server) == String(before + 1))
            let history = try await Self.page(server, Self.production + "/change-requests?view=history", as: ana)
            #expect(history.text.contains("New banner"))
            #expect(history.text.contains("Applied"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func applyingARequestThatNoLongerMergesSuspendsItAndSaysWhy(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.requireApproval(server)
            let reviewer = try await ChangeRequestTests.reviewer(server)
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let id = try await Self.requestReview(server, ana, banner: "Ana's banner")
            let hash = try #require(try await Self.changeRequest(server, id)["contentHash"]?.stringValue)
            try await ChangeRequestTests.review(server, id, "approve", hash: hash, key: reviewer.key)
            // Meanwhile another request changes the same flag and applies first.
            let other = try await ChangeRequestTests.open(
                server,
                ["kind": "template", "template": try await ChangeRequestTests.template(server, banner: "Other banner")]
            )
            try await ChangeRequestTests.review(server, other.id, "approve", hash: other.hash, key: reviewer.key)
            #expect(try await ChangeRequestTests.apply(server, other.id).status == .ok)
            let live = try await ChangeRequestTests.liveVersion(server)

            let path = Self.production + "/change-requests/\(id)"
            let page = try await ConsoleTests.request(server, .get, path, cookie: ana.cookie)
            #expect(page.text.contains("It no longer applies cleanly"))
            let applied = try await Self.submit(server, path + "/apply", ["_csrf": ana.csrf], as: ana)
            #expect(applied.status == .conflict)
            #expect(applied.text.contains("is suspended"))
            #expect(applied.text.contains("banner_text"))
            let suspended = try await Self.changeRequest(server, id)
            #expect(suspended["state"] == "suspended")
            #expect(try await ChangeRequestTests.liveVersion(server) == live)
            #expect(
                ConsoleDraftTests.defaultValue(try await ConsoleDraftTests.liveTemplate(server), "banner_text")
                    == "Other banner"
            )
        }
    }

    /// The tabs filter in the database: an open request stays on "Open" however many finished
    /// ones came after it (a list of the newest 200, filtered afterwards, lost it).
    @Test(arguments: TestDatabase.allCases)
    func anOldOpenRequestStaysListedBehindManyFinishedOnes(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.requireApproval(server)
            let change: JSONObject = [
                "kind": "template", "template": try await ChangeRequestTests.template(server, banner: "Later"),
            ]
            _ = try await ChangeRequestTests.open(server, change, title: "the-oldest-open-one")
            // Eight at a time: 402 requests one after another outlasted the time limit on a
            // loaded 2-core machine (PostgreSQL's round trips, not the server's work).
            for batch in stride(from: 0, through: 200, by: 8) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in batch..<min(batch + 8, 201) {
                        group.addTask {
                            let finished = try await ChangeRequestTests.open(server, change, title: "finished-\(index)")
                            let cancelled = try await server.send(
                                .post,
                                ChangeRequestTests.requests + "/" + finished.id + "/cancel"
                            )
                            #expect(cancelled.status == .ok, "\(cancelled.text)")
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let open = try await Self.page(server, Self.production + "/change-requests?view=open", as: admin)
            #expect(open.status == .ok)
            #expect(
                open.text.contains("the-oldest-open-one"),
                "the open tab lost the request behind 201 cancelled ones"
            )
            #expect(!open.text.contains("finished-200"))
            let history = try await Self.page(server, Self.production + "/change-requests?view=history", as: admin)
            #expect(history.text.contains("finished-200") && !history.text.contains("the-oldest-open-one"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theAuthorCancelsAndACommentNeedsText(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.requireApproval(server)
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let id = try await Self.requestReview(server, ana, banner: "Never")
            let path = Self.production + "/change-requests/\(id)"
            let empty = try await Self.submit(
                server,
                path + "/review",
                ["_csrf": ana.csrf, "decision": "comment", "comment": "  "],
                as: ana
            )
            #expect(empty.status == .badRequest)
            #expect(empty.text.contains("a comment needs some text"))
            let commented = try await Self.submit(
                server,
                path + "/review",
                ["_csrf": ana.csrf, "decision": "comment", "comment": "<b>not markup</b>"],
                as: ana
            )
            #expect(commented.status == .seeOther)
            let page = try await ConsoleTests.request(server, .get, path, cookie: ana.cookie)
            #expect(page.text.contains("&lt;b&gt;not markup&lt;/b&gt;"))
            let cancelled = try await Self.submit(server, path + "/cancel", ["_csrf": ana.csrf], as: ana)
            #expect(cancelled.status == .seeOther)
            #expect(try await Self.changeRequest(server, id)["state"] == "cancelled")
            let unknown = try await Self.page(server, Self.production + "/change-requests/cr_nothing", as: ana)
            #expect(unknown.status == .notFound)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theWebhooksPageShowsASecretOnceRotatesAndDeletes(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: WebhookAPITests.allowingLoopback) { server in
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let page = "/projects/demo/webhooks"
            #expect(try await ConsoleTests.request(server, .get, page, cookie: editor.cookie).status == .forbidden)
            let home = try await ConsoleTests.request(server, .get, "/", cookie: admin.cookie)
            #expect(home.text.contains("href=\"/projects/demo/webhooks\""))

            let none = try await Self.submit(
                server,
                page,
                ["_csrf": admin.csrf, "url": "http://127.0.0.1:9/hook"],
                as: admin
            )
            #expect(none.status == .badRequest)
            #expect(none.text.contains("choose at least one event"))
            let bad = try await Self.submit(
                server,
                page,
                ["_csrf": admin.csrf, "url": "ftp://example.com/x", "event.version.published": "on"],
                as: admin
            )
            #expect(bad.status == .badRequest)
            #expect(bad.text.contains("absolute http:// or https:// URL"))

            let created = try await ConsoleTests.request(
                server,
                .post,
                page,
                form: [
                    "_csrf": admin.csrf, "url": "http://127.0.0.1:9/hook", "description": "CI",
                    "event.version.published": "on", "event.change_request.opened": "on",
                ],
                cookie: admin.cookie
            )
            #expect(created.status == .ok, "\(created.text)")
            let endpoints = try await WebhookStore(engine: server.application.store.engine).endpoints(projectId: "demo")
            let endpoint = try #require(endpoints.first)
            #expect(endpoints.count == 1)
            #expect(endpoint.events == [.versionPublished, .changeRequestOpened])
            #expect(created.text.contains(endpoint.secret))
            // Shown once: the page itself never shows it again.
            let later = try await ConsoleTests.request(server, .get, page, cookie: admin.cookie)
            #expect(!later.text.contains(endpoint.secret))
            #expect(later.text.contains("version.published, change_request.opened"))

            // A publish queues a delivery, shown with its status.
            let template = try await ChangeRequestTests.template(server, banner: "Hooked")
            let published = try await server.send(
                .put,
                TestServer.demoPath + "/template",
                json: template,
                headers: [.ifMatch: "etag-demo-production-1"]
            )
            #expect(published.status == .ok, "\(published.text)")
            let deliveries = try await ConsoleTests.request(server, .get, page, cookie: admin.cookie)
            #expect(
                deliveries.text.contains("<th scope=\"row\" data-label=\"Event\" class=\"mono\">version.published</th>")
            )

            let rotated = try await Self.submit(
                server,
                page + "/\(endpoint.id)/rotate-secret",
                ["_csrf": admin.csrf],
                as: admin
            )
            #expect(rotated.status == .ok)
            let after = try await WebhookStore(engine: server.application.store.engine).endpoint(
                projectId: "demo",
                id: endpoint.id
            )
            #expect(after.secret != endpoint.secret)
            #expect(after.previousSecret == endpoint.secret)
            #expect(rotated.text.contains(after.secret))
            #expect(!rotated.text.contains(endpoint.secret))

            let deleted = try await Self.submit(
                server,
                page + "/\(endpoint.id)/delete",
                ["_csrf": admin.csrf],
                as: admin
            )
            #expect(deleted.status == .seeOther)
            #expect(
                try await WebhookStore(engine: server.application.store.engine).endpoints(projectId: "demo").isEmpty
            )
        }
    }
}
