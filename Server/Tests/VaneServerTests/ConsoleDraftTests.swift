import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// Drafts over real HTTP: the flag editor saves into a draft kept on the server, review shows
/// the diff and problems, publishing sends the version reviewed, and a publish in between is
/// merged or shown as a conflict.
@Suite(.timeLimit(.minutes(5))) struct ConsoleDraftTests {
    static let production = "/projects/demo/environments/production"

    /// The flag editor's form for a flag as the demo template has it, with changes.
    static func editorForm(
        _ browser: ConsoleTests.Browser,
        type: String = "BOOLEAN",
        defaultValue: String,
        description: String = "",
        extra: [String: String] = [:]
    ) -> [String: String] {
        var form = [
            "_csrf": browser.csrf, "type": type, "default_mode": "value", "default_value": defaultValue,
            "description": description,
        ]
        // The demo's conditional values stay as they are, as the page's own fields would keep them
        // (a value dropped would leave its condition unused: a warning on the review).
        for (index, name) in ["germany_austria", "new_app_versions", "checkout_test_b", "pro_plan"].enumerated() {
            form["c\(index)_name"] = name
            form["c\(index)_mode"] = "keep"
        }
        form.merge(extra) { _, new in new }
        return form
    }

    /// Publishes the person's draft from the review page, as reviewed on version `live`.
    @discardableResult
    static func publish(
        _ server: TestServer,
        _ browser: ConsoleTests.Browser,
        live: String,
        message: String
    ) async throws -> TestServer.Reply {
        try await ConsoleTests.request(
            server,
            .post,
            production + "/review/publish",
            form: ["_csrf": browser.csrf, "live": live, "message": message],
            cookie: browser.cookie
        )
    }

    static func liveTemplate(_ server: TestServer) async throws -> JSONObject {
        let reply = try await server.send(.get, "/v1/projects/demo/environments/production/template")
        return try #require(reply.object)
    }

    static func defaultValue(_ template: JSONObject, _ key: String) -> String? {
        template["parameters"]?.objectValue?[key]?.objectValue?["defaultValue"]?.objectValue?["value"]?.stringValue
    }

    @Test(arguments: TestDatabase.allCases)
    func editsCollectInADraftThatSurvivesAndOthersSee(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let ben = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let saved = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/edit",
                form: Self.editorForm(ana, type: "STRING", defaultValue: "Winter sale", description: "Top banner"),
                cookie: ana.cookie
            )
            #expect(saved.status == .seeOther, "\(saved.text)")
            #expect(saved.headers[.location] == Self.production + "/flags/banner_text/edit?saved=1")
            // Nothing went live.
            #expect(Self.defaultValue(try await Self.liveTemplate(server), "banner_text") != "Winter sale")
            // The draft is on the server: a new page load (any node) shows it.
            let editor = try await ConsoleTests.request(
                server,
                .get,
                Self.production + "/flags/banner_text/edit",
                cookie: ana.cookie
            )
            #expect(editor.text.contains("Winter sale"))
            #expect(editor.text.contains("Your draft has 1 unpublished change(s)"))
            // Ben sees that Ana has a draft open, and not her values.
            let bens = try await ConsoleTests.request(server, .get, Self.production + "/flags", cookie: ben.cookie)
            #expect(bens.text.contains("Also editing"))
            #expect(bens.text.contains("editor-"))
            #expect(!bens.text.contains("Winter sale"))
            // The review shows the structured diff; publishing needs a message and the live version.
            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(review.text.contains("Parameters (1)"))
            #expect(review.text.contains("banner_text"))
            #expect(review.text.contains("No problems found."))
            let published = try await Self.publish(server, ana, live: "1", message: "Winter banner")
            #expect(published.status == .seeOther, "\(published.text)")
            #expect(published.headers[.location] == Self.production + "/flags?published=2")
            let live = try await Self.liveTemplate(server)
            #expect(Self.defaultValue(live, "banner_text") == "Winter sale")
            #expect(live["version"]?.objectValue?["description"] == "Winter banner")
            // The draft is gone once published.
            let after = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(after.text.contains("You have no draft"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func problemsAreShownAtTheFieldAndNothingIsSaved(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let bad = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/payments_enabled/edit",
                form: Self.editorForm(ana, defaultValue: "yes"),
                cookie: ana.cookie
            )
            #expect(bad.status == .unprocessableContent)
            #expect(bad.text.contains("parameters.payments_enabled.defaultValue.value"))
            #expect(bad.text.contains("is not a BOOLEAN"))
            #expect(bad.text.contains("Not saved: 1 problem to fix"))
            let json = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/new",
                form: Self.editorForm(ana, type: "JSON", defaultValue: "{\"a\": ", extra: ["key": "layout_json"]),
                cookie: ana.cookie
            )
            #expect(json.status == .unprocessableContent)
            #expect(json.text.contains("the value is not valid JSON"))
            let badKey = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/new",
                form: Self.editorForm(ana, defaultValue: "true", extra: ["key": "9 lives"]),
                cookie: ana.cookie
            )
            #expect(badKey.status == .unprocessableContent)
            #expect(badKey.text.contains("must start with a letter"))
            let duplicate = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/new",
                form: Self.editorForm(ana, defaultValue: "true", extra: ["key": "payments_enabled"]),
                cookie: ana.cookie
            )
            #expect(duplicate.status == .unprocessableContent)
            #expect(duplicate.text.contains("exists already"))
            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(review.text.contains("You have no draft"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func viewersReadTheEditorButCannotSave(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await ConsoleTests.request(
                server,
                .get,
                Self.production + "/flags/payments_enabled/edit",
                cookie: viewer.cookie
            )
            #expect(page.status == .ok)
            #expect(page.text.contains("needs the editor role"))
            #expect(!page.text.contains("Save to draft"))
            let refused = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/payments_enabled/edit",
                form: Self.editorForm(viewer, defaultValue: "false"),
                cookie: viewer.cookie
            )
            #expect(refused.status == .forbidden)
            let newPage = try await ConsoleTests.request(
                server,
                .get,
                Self.production + "/flags/new",
                cookie: viewer.cookie
            )
            #expect(newPage.status == .forbidden)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func conditionalValuesAndMetadataRoundTrip(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "admin")
            let form = Self.editorForm(
                ana,
                type: "NUMBER",
                defaultValue: "3",
                description: "Retries",
                extra: [
                    "key": "retry_count", "c0_name": "germany_austria", "c0_mode": "value", "c0_value": "5",
                    "c1_name": "new_app_versions", "c1_mode": "in-app", "c2_name": "checkout_test_b", "c2_mode": "none",
                    "title": "Retry count", "category": "Network", "allowed_values": "3\n5\n\n", "realtime": "on",
                ]
            )
            let saved = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/new",
                form: form,
                cookie: ana.cookie
            )
            #expect(saved.status == .seeOther, "\(saved.text)")
            let published = try await Self.publish(server, ana, live: "1", message: "retries")
            #expect(published.status == .seeOther, "\(published.text)")
            let live = try await Self.liveTemplate(server)
            let flag = try #require(live["parameters"]?.objectValue?["retry_count"]?.objectValue)
            #expect(flag["valueType"] == "NUMBER")
            #expect(flag["description"] == "Retries")
            let conditional = flag["conditionalValues"]?.objectValue
            #expect(conditional?["germany_austria"]?.objectValue?["value"] == "5")
            #expect(conditional?["new_app_versions"]?.objectValue?["useInAppDefault"] == .bool(true))
            #expect(conditional?["checkout_test_b"] == nil)
            let vane = flag["vane"]?.objectValue
            #expect(vane?["title"] == "Retry count")
            #expect(vane?["category"] == "Network")
            #expect(vane?["allowedValues"] == .array(["3", "5"]))
            #expect(vane?["realtime"] == .bool(true))
            // A client in Germany gets the conditional value: the flag really works.
            let key = try await server.createKey(role: "client", project: "demo", environment: "production")
            let fetched = try await server.send(
                .post,
                TestServer.demoPath + "/fetch",
                key: key,
                json: ["context": ["randomizationId": "u1", "device.country": "DE", "app.version": "1.0.0"]]
            )
            #expect(fetched.object?["entries"]?.objectValue?["retry_count"] == "5", "\(fetched.text)")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aPublishInBetweenIsMergedWhenItTouchesOtherFlags(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let ben = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            _ = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/edit",
                form: Self.editorForm(ana, type: "STRING", defaultValue: "Ana's banner"),
                cookie: ana.cookie
            )
            _ = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/payments_enabled/edit",
                form: Self.editorForm(ben, defaultValue: "false"),
                cookie: ben.cookie
            )
            let bens = try await Self.publish(server, ben, live: "1", message: "payments off")
            #expect(bens.headers[.location] == Self.production + "/flags?published=2")
            // Ana publishes what she reviewed against version 1: refused, sent back to review.
            let stale = try await Self.publish(server, ana, live: "1", message: "banner")
            #expect(stale.headers[.location] == Self.production + "/review?moved=1")
            let review = try await ConsoleTests.request(
                server,
                .get,
                Self.production + "/review?moved=1",
                cookie: ana.cookie
            )
            #expect(review.text.contains("Published since you started: version 2"))
            #expect(review.text.contains("payments off"))
            #expect(review.text.contains("re-applied on top of version 2"))
            let published = try await Self.publish(server, ana, live: "2", message: "banner")
            #expect(published.headers[.location] == Self.production + "/flags?published=3", "\(published.text)")
            let live = try await Self.liveTemplate(server)
            #expect(Self.defaultValue(live, "banner_text") == "Ana's banner")
            #expect(Self.defaultValue(live, "payments_enabled") == "false")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aConflictIsShownFieldByFieldAndSettledByChoice(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let ben = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            for (browser, text) in [(ana, "Ana's banner"), (ben, "Ben's banner")] {
                _ = try await ConsoleTests.request(
                    server,
                    .post,
                    Self.production + "/flags/banner_text/edit",
                    form: Self.editorForm(browser, type: "STRING", defaultValue: text),
                    cookie: browser.cookie
                )
            }
            _ = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/payments_enabled/edit",
                form: Self.editorForm(ana, defaultValue: "false"),
                cookie: ana.cookie
            )
            _ = try await Self.publish(server, ben, live: "1", message: "Ben's")
            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(review.text.contains("Flag banner_text"))
            #expect(review.text.contains("defaultValue"))
            #expect(review.text.contains("&quot;Ben&#39;s banner&quot;") || review.text.contains("Ben&#39;s banner"))
            #expect(review.text.contains("Settle the conflicts above first."))
            #expect(!review.text.contains("review/publish"))
            // Keeping mine would revert Ben's published change: the page says so before it is taken.
            #expect(
                review.text.contains(
                    "Keeping mine reverts live change: banner_text defaultValue &quot;Welcome to Vane!&quot; → &quot;Ben&#39;s banner&quot;"
                ),
                "\(review.text)"
            )
            // Publishing anyway is refused: conflicts remain.
            let refused = try await Self.publish(server, ana, live: "2", message: "mine")
            #expect(refused.headers[.location] == Self.production + "/review")
            #expect(Self.defaultValue(try await Self.liveTemplate(server), "banner_text") == "Ben's banner")
            // Keep mine: the draft now starts from version 2 and keeps both of Ana's changes.
            let settled = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/review/resolve",
                form: ["_csrf": ana.csrf, "live": "2", "choice-0-0": "mine"],
                cookie: ana.cookie
            )
            #expect(settled.headers[.location] == Self.production + "/review?resolved=1")
            let published = try await Self.publish(server, ana, live: "2", message: "mine")
            #expect(published.headers[.location] == Self.production + "/flags?published=3", "\(published.text)")
            let live = try await Self.liveTemplate(server)
            #expect(Self.defaultValue(live, "banner_text") == "Ana's banner")
            #expect(Self.defaultValue(live, "payments_enabled") == "false")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func twoPeopleChangingDifferentFieldsOfOneFlagDoNotConflict(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let ben = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let description = "The banner at the top of the home screen."
            _ = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/edit",
                form: Self.editorForm(ana, type: "STRING", defaultValue: "Ana's banner", description: description),
                cookie: ana.cookie
            )
            _ = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/edit",
                form: Self.editorForm(
                    ben,
                    type: "STRING",
                    defaultValue: "Welcome to Vane!",
                    description: "Ben's words"
                ),
                cookie: ben.cookie
            )
            _ = try await Self.publish(server, ben, live: "1", message: "Ben's")
            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(!review.text.contains("Settle conflicts"), "\(review.text)")
            #expect(review.text.contains("Your changes and theirs touch different fields"))
            let published = try await Self.publish(server, ana, live: "2", message: "Ana's")
            #expect(published.headers[.location] == Self.production + "/flags?published=3", "\(published.text)")
            let live = try await Self.liveTemplate(server)
            #expect(Self.defaultValue(live, "banner_text") == "Ana's banner")
            #expect(live["parameters"]?.objectValue?["banner_text"]?.objectValue?["description"] == "Ben's words")
        }
    }

    @Test func discardingAndDeletingAFlag() async throws {
        try await TestServer.run(.sqlite) { server in
            let ana = try await ConsoleTests.signIn(server, role: "admin")
            let removed = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/delete",
                form: ["_csrf": ana.csrf],
                cookie: ana.cookie
            )
            #expect(removed.headers[.location] == Self.production + "/review")
            let flags = try await ConsoleTests.request(server, .get, Self.production + "/flags", cookie: ana.cookie)
            #expect(flags.text.contains("removed in your draft"))
            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(review.text.contains("tag-removed"))
            let discarded = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/review/discard",
                form: ["_csrf": ana.csrf],
                cookie: ana.cookie
            )
            #expect(discarded.status == .seeOther)
            let after = try await ConsoleTests.request(server, .get, Self.production + "/flags", cookie: ana.cookie)
            #expect(!after.text.contains("in your draft"))
            #expect(after.text.contains("banner_text"))
        }
    }
}

/// The review's "who would see a different value" over the sample of users.
@Suite(.timeLimit(.minutes(5))) struct ConsoleReviewSampleTests {
    static let production = ConsoleDraftTests.production

    @Test(arguments: TestDatabase.allCases)
    func theReviewCountsSampledUsersWhoseValueChanges(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            // Only users in Germany or Austria see the new German banner.
            let banner = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/edit",
                form: ConsoleDraftTests.editorForm(
                    ana,
                    type: "STRING",
                    defaultValue: "Welcome to Vane!",
                    description: "The banner at the top of the home screen.",
                    extra: [
                        "c0_name": "germany_austria", "c0_mode": "value", "c0_value": "Hallo!",
                        "c1_name": "new_app_versions", "c1_mode": "none",
                        "c2_name": "checkout_test_b", "c2_mode": "none",
                        "title": "Home banner", "category": "Home",
                    ]
                ),
                cookie: ana.cookie
            )
            #expect(banner.status == .seeOther, "\(banner.text)")
            // Everyone gets a new default for payments_enabled.
            let payments = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/payments_enabled/edit",
                form: ConsoleDraftTests.editorForm(
                    ana,
                    defaultValue: "false",
                    description: "Kill switch: turn off to hide every payment screen at once.",
                    extra: [
                        "title": "Payments", "category": "Safety", "allowed_values": "true\nfalse", "realtime": "on",
                    ]
                ),
                cookie: ana.cookie
            )
            #expect(payments.status == .seeOther, "\(payments.text)")
            // A description alone changes nobody's value.
            let layout = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/checkout_variant/edit",
                form: ConsoleDraftTests.editorForm(
                    ana,
                    type: "STRING",
                    defaultValue: "control",
                    description: "A new description",
                    extra: [
                        "c2_name": "checkout_test_b", "c2_mode": "value", "c2_value": "one_page",
                        "c0_name": "germany_austria", "c0_mode": "none",
                        "c1_name": "new_app_versions", "c1_mode": "none",
                        "title": "Checkout experiment", "category": "Checkout",
                        "allowed_values": "control\none_page",
                    ]
                ),
                cookie: ana.cookie
            )
            #expect(layout.status == .seeOther, "\(layout.text)")

            let review = try await ConsoleTests.request(server, .get, Self.production + "/review", cookie: ana.cookie)
            #expect(review.status == .ok)
            // The oracle reads the sample's countries directly, not through evaluation.
            let live = DemoProject.template
            let contexts = ValueChangeSample.contexts(
                savedContexts: [],
                templates: [ValueChangeSample.restricted(live, to: ["banner_text", "payments_enabled"])],
                count: ValueChangeSample.syntheticCount,
                seed: 1
            )
            let german = contexts.filter {
                $0.attributes["device.country"] == .string("de") || $0.attributes["device.country"] == .string("at")
            }.count
            let total = ValueChangeSample.syntheticCount
            let germanShare = Double(german) / Double(total)
            #expect(germanShare > 0.55 && germanShare < 0.78, "about two thirds of the sample is in DE or AT")
            let share = ReviewSample.percentText(Double(german) * 100 / Double(total))
            #expect(review.text.contains("Who would see a different value"))
            #expect(review.text.contains("\(german) of \(total) (\(share))"), "\(review.text)")
            #expect(review.text.contains("\(total) of \(total) (100 %)"))
            #expect(!review.text.contains(">checkout_variant</a></th><td data-label=\"Sampled"))
        }
    }

    @Test func keysThatMayChangeFollowConditionsAndTheirOrder() throws {
        let live = DemoProject.template
        var draft = live
        #expect(ValueChangeSample.keysThatMayChange(from: live, to: draft).isEmpty)
        // A new expression for a condition changes every key that uses it.
        draft.conditions[0].source = .expression("device.country in ['ch']")
        #expect(ValueChangeSample.keysThatMayChange(from: live, to: draft) == ["banner_text"])
        // Swapping two conditions no key uses together changes nothing.
        draft = live
        draft.conditions.swapAt(0, 1)
        #expect(ValueChangeSample.keysThatMayChange(from: live, to: draft).isEmpty)
        // A key with values under both swapped conditions may change.
        draft.parameters[1].conditionalValues.append(
            ConditionalValue(conditionName: "new_app_versions", value: .value("New!"))
        )
        var liveWithBoth = live
        liveWithBoth.parameters[1].conditionalValues = draft.parameters[1].conditionalValues
        #expect(ValueChangeSample.keysThatMayChange(from: liveWithBoth, to: draft) == ["banner_text"])
        // Removing a key changes it; restricting keeps only the keys and conditions asked for.
        draft = live
        draft.parameters.removeLast()
        #expect(ValueChangeSample.keysThatMayChange(from: live, to: draft) == ["checkout_variant"])
        let restricted = ValueChangeSample.restricted(live, to: ["banner_text"])
        #expect(restricted.allParameters.map(\.key) == ["banner_text"])
        #expect(restricted.conditions.map(\.name) == ["germany_austria"])
    }
}
