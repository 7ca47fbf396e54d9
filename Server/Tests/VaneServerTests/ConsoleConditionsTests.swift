import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The conditions page over real HTTP: reordering, editing and deleting go into the person's
/// draft and never to the live template; parse errors show their column and save nothing; the
/// live check answers from the server's parser and needs the form token.
@Suite(.timeLimit(.minutes(5))) struct ConsoleConditionsTests {
    static let staging = "/projects/demo/environments/staging"
    static let stagingKey = EnvironmentKey(projectId: "demo", environmentId: "staging")

    static func request(
        _ server: TestServer,
        _ method: HTTPRequest.Method,
        _ path: String,
        form: [String: String]? = nil,
        as browser: ConsoleTests.Browser
    ) async throws -> TestServer.Reply {
        try await ConsoleTests.request(server, method, path, form: form, cookie: browser.cookie)
    }

    /// The names in the order the conditions page lists them.
    static func listedNames(_ server: TestServer, as browser: ConsoleTests.Browser) async throws -> [String] {
        let page = try await request(server, .get, staging + "/conditions", as: browser)
        #expect(page.status == .ok)
        return page.text.matches(of: /<tr data-condition="([^"]*)">/).map { String($0.output.1) }
    }

    /// The template of the only draft of demo/staging, or nil when there is none.
    static func draftTemplate(_ server: TestServer) async throws -> ConfigTemplate? {
        let drafts = DraftStore(engine: server.application.store.engine)
        guard let summary = try await drafts.drafts(stagingKey).first else { return nil }
        return try await drafts.draft(stagingKey, userId: summary.userId)?.template
    }

    /// The live template's condition names, through the API.
    static func liveNames(_ server: TestServer) async throws -> [String] {
        let live = try await server.send(.get, "/v1/projects/demo/environments/staging/template")
        return live.object?["conditions"]?.arrayValue?.compactMap { $0.objectValue?["name"]?.stringValue } ?? []
    }

    static let demoOrder = ["germany_austria", "new_app_versions", "checkout_test_b"]

    @Test(arguments: TestDatabase.allCases)
    func editorsReorderTheDraftNotTheLiveTemplate(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            #expect(try await Self.listedNames(server, as: editor) == Self.demoOrder)
            let page = try await Self.request(server, .get, Self.staging + "/conditions", as: editor)
            #expect(page.text.contains("You are looking at the live version 1"))
            #expect(page.text.contains("aria-label=\"Move checkout_test_b up\""))
            #expect(!page.text.contains("aria-label=\"Move germany_austria up\""))

            // Keyboard path: one Up button.
            let moved = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/checkout_test_b/move",
                form: ["_csrf": editor.csrf, "to": "up"],
                as: editor
            )
            #expect(moved.status == .seeOther)
            #expect(moved.headers[.location] == Self.staging + "/conditions?moved=checkout_test_b")
            let afterMove = ["germany_austria", "checkout_test_b", "new_app_versions"]
            #expect(try await Self.listedNames(server, as: editor) == afterMove)
            #expect(try await Self.draftTemplate(server)?.conditions.map(\.name) == afterMove)
            #expect(try await Self.liveNames(server) == Self.demoOrder)
            let flashed = try await Self.request(server, .get, moved.headers[.location] ?? "", as: editor)
            #expect(flashed.text.contains("Moved checkout_test_b to position 2 in your draft."))
            #expect(flashed.text.contains("You are looking at your draft"))

            // Drag and drop: the whole order at once.
            let dropped = ["new_app_versions", "germany_austria", "checkout_test_b"]
            let reordered = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/order",
                form: ["_csrf": editor.csrf, "order": dropped.joined(separator: "\n")],
                as: editor
            )
            #expect(reordered.status == .seeOther)
            #expect(try await Self.draftTemplate(server)?.conditions.map(\.name) == dropped)
            #expect(try await Self.liveNames(server) == Self.demoOrder)

            // An order that does not name exactly the conditions is refused, nothing changes.
            let partial = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/order",
                form: ["_csrf": editor.csrf, "order": "checkout_test_b\ngermany_austria"],
                as: editor
            )
            #expect(partial.status == .conflict)
            #expect(try await Self.draftTemplate(server)?.conditions.map(\.name) == dropped)

            // Moving back to the live order leaves nothing to publish: the draft is gone.
            let back = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/order",
                form: ["_csrf": editor.csrf, "order": Self.demoOrder.joined(separator: "\n")],
                as: editor
            )
            #expect(back.status == .seeOther)
            #expect(try await Self.draftTemplate(server) == nil)

            // Another environment is not theirs to change.
            let production = try await Self.request(
                server,
                .post,
                "/projects/demo/environments/production/conditions/checkout_test_b/move",
                form: ["_csrf": editor.csrf, "to": "up"],
                as: editor
            )
            #expect(production.status == .forbidden)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func renamingUpdatesEveryConditionalValue(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let form = try await Self.request(
                server,
                .get,
                Self.staging + "/conditions/germany_austria/edit",
                as: editor
            )
            #expect(form.status == .ok)
            #expect(form.text.contains("device.country in [&#39;de&#39;, &#39;at&#39;]"))
            #expect(form.text.contains("Used by banner_text"))
            let saved = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/germany_austria/edit",
                form: [
                    "_csrf": editor.csrf, "name": "dach region", "expression": "device.country in ['de', 'at', 'ch']",
                    "tagColor": "TEAL",
                ],
                as: editor
            )
            #expect(saved.status == .seeOther, "\(saved.text)")
            #expect(saved.headers[.location] == Self.staging + "/conditions?saved=dach%20region")
            let draft = try #require(try await Self.draftTemplate(server))
            #expect(draft.conditions.map(\.name) == ["dach region", "new_app_versions", "checkout_test_b"])
            #expect(draft.conditions.first?.tagColor == "TEAL")
            #expect(draft.conditions.first?.source == .expression("device.country in ['de', 'at', 'ch']"))
            let banner = try #require(draft.parameter(forKey: "banner_text"))
            #expect(banner.conditionalValues.map(\.conditionName) == ["dach region"])
            #expect(ParsedTemplate(draft).validate().filter { $0.severity == .error }.isEmpty)
            // The list shows the new name with its flag, the live template still has the old one.
            let list = try await Self.request(
                server,
                .get,
                Self.staging + "/conditions?saved=dach%20region",
                as: editor
            )
            #expect(list.text.contains("Saved the condition dach region in your draft."))
            #expect(list.text.contains("/flags/banner_text/edit"))
            #expect(try await Self.liveNames(server) == Self.demoOrder)
            // Its edit page is at its encoded name.
            let again = try await Self.request(
                server,
                .get,
                Self.staging + "/conditions/dach%20region/edit",
                as: editor
            )
            #expect(again.status == .ok)

            // A name another condition has is refused.
            let duplicate = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/new",
                form: ["_csrf": editor.csrf, "name": "new_app_versions", "expression": "true"],
                as: editor
            )
            #expect(duplicate.status == .badRequest)
            #expect(duplicate.text.contains("already called new_app_versions"))
            #expect(try await Self.draftTemplate(server)?.conditions.count == 3)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anInvalidExpressionShowsItsColumnAndSavesNothing(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let refused = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/new",
                form: ["_csrf": editor.csrf, "name": "ios_users", "expression": "device.os == ios"],
                as: editor
            )
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains("column 14: expected a string in single quotes, found &quot;ios&quot;"))
            #expect(refused.text.contains("device.os == <mark>ios</mark>"))
            #expect(refused.text.contains("aria-invalid=\"true\""))
            // What was typed comes back to be corrected.
            #expect(refused.text.contains("value=\"ios_users\""))
            #expect(try await Self.draftTemplate(server) == nil)

            // The same for an edit, and an empty name.
            let badEdit = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/new_app_versions/edit",
                form: ["_csrf": editor.csrf, "name": "", "expression": "app.version.>=(['2.0.0']) &&"],
                as: editor
            )
            #expect(badEdit.status == .badRequest)
            #expect(badEdit.text.contains("Give the condition a name."))
            #expect(badEdit.text.contains("found the end of the condition"))
            #expect(try await Self.draftTemplate(server) == nil)
            #expect(try await Self.listedNames(server, as: editor) == Self.demoOrder)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func deletingAConditionFlagsUseIsRefused(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let refused = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/germany_austria/delete",
                form: ["_csrf": editor.csrf],
                as: editor
            )
            #expect(refused.status == .conflict)
            #expect(refused.text.contains("is not deleted: these flags have a conditional value for it"))
            #expect(refused.text.contains("/flags/banner_text/edit"))
            #expect(refused.text.contains("remove its value for germany_austria"))
            #expect(try await Self.draftTemplate(server) == nil)

            // An unused one goes.
            let created = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/new",
                form: ["_csrf": editor.csrf, "name": "beta", "expression": "app.version.contains(['beta'])"],
                as: editor
            )
            #expect(created.status == .seeOther)
            #expect(try await Self.draftTemplate(server)?.conditions.map(\.name) == Self.demoOrder + ["beta"])
            let deleted = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/beta/delete",
                form: ["_csrf": editor.csrf],
                as: editor
            )
            #expect(deleted.status == .seeOther)
            #expect(try await Self.listedNames(server, as: editor) == Self.demoOrder)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func viewersReadButCannotPost(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await Self.request(server, .get, Self.staging + "/conditions", as: viewer)
            #expect(page.status == .ok)
            #expect(try await Self.listedNames(server, as: viewer) == Self.demoOrder)
            #expect(!page.text.contains("New condition"))
            #expect(!page.text.contains("/move\""))
            #expect(!page.text.contains("drag-handle"))
            #expect(
                try await Self.request(server, .get, Self.staging + "/conditions/new", as: viewer).status == .forbidden
            )
            let posts: [(String, [String: String])] = [
                ("/conditions/checkout_test_b/move", ["to": "up"]),
                ("/conditions/order", ["order": Self.demoOrder.reversed().joined(separator: "\n")]),
                ("/conditions/new", ["name": "x", "expression": "true"]),
                ("/conditions/new_app_versions/edit", ["name": "x", "expression": "true"]),
                ("/conditions/checkout_test_b/delete", [:]),
            ]
            for (path, fields) in posts {
                let reply = try await Self.request(
                    server,
                    .post,
                    Self.staging + path,
                    form: fields.merging(["_csrf": viewer.csrf]) { $1 },
                    as: viewer
                )
                #expect(reply.status == .forbidden, "\(path)")
            }
            #expect(try await Self.draftTemplate(server) == nil)
            #expect(try await Self.liveNames(server) == Self.demoOrder)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theLiveCheckAnswersWithTheColumnAndNeedsTheToken(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let path = Self.staging + "/conditions/check"
            let bad = try await Self.request(
                server,
                .post,
                path,
                form: ["_csrf": editor.csrf, "expression": "device.os == ios"],
                as: editor
            )
            #expect(bad.status == .ok)
            #expect(bad.headers[.contentType] == "application/json; charset=utf-8")
            let object = try #require(bad.object)
            #expect(object["ok"] == false)
            #expect(object["column"]?.numberValue == JSONNumber(14))
            #expect(object["length"]?.numberValue == JSONNumber(3))
            #expect(object["message"]?.stringValue == "column 14: expected a string in single quotes, found \"ios\"")

            let good = try await Self.request(
                server,
                .post,
                path,
                form: ["_csrf": editor.csrf, "expression": "device.os == 'ios' && percent <= 20"],
                as: editor
            )
            #expect(good.object?["ok"] == true)
            #expect(good.object?["column"] == .null)

            // Without the token, or with another one: refused.
            let missing = try await Self.request(server, .post, path, form: ["expression": "true"], as: editor)
            #expect(missing.status == .forbidden)
            #expect(missing.object == nil)
            let forged = try await Self.request(
                server,
                .post,
                path,
                form: ["_csrf": "forged", "expression": "true"],
                as: editor
            )
            #expect(forged.status == .forbidden)

            // The builder endpoint appends with && and refuses bad values.
            let built = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/build",
                form: [
                    "_csrf": editor.csrf, "add": "country", "rule_countries": "DE, AT", "expression": "percent <= 20",
                ],
                as: editor
            )
            #expect(built.object?["expression"]?.stringValue == "percent <= 20 && device.country in ['DE', 'AT']")
            let wrong = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/build",
                form: ["_csrf": editor.csrf, "add": "country", "rule_countries": "Germany"],
                as: editor
            )
            #expect(wrong.object?["ok"] == false)
        }
    }

    @Test func theBuilderFormAddsARuleWithoutSaving() async throws {
        try await TestServer.run(.sqlite) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let reply = try await Self.request(
                server,
                .post,
                Self.staging + "/conditions/new",
                form: [
                    "_csrf": editor.csrf, "name": "half", "expression": "device.os == 'ios'", "add": "percent",
                    "rule_seed": "rollout", "rule_percent_from": "0", "rule_percent_to": "50",
                ],
                as: editor
            )
            #expect(reply.status == .ok)
            #expect(
                reply.text.contains("device.os == &#39;ios&#39; &amp;&amp; percent(&#39;rollout&#39;) between 0 and 50")
            )
            #expect(reply.text.contains("value=\"half\""))
            #expect(try await Self.draftTemplate(server) == nil)
        }
    }
}

/// The rule builder writes Firebase's expression text, which VaneCore's parser reads back.
@Suite struct ConsoleConditionsBuilderTests {
    typealias Rule = ConditionBuilder.Rule

    static let cases: [(Rule, String)] = [
        (.country(["DE", "at"]), "device.country in ['DE', 'at']"),
        (.language(["de", "en-GB"]), "device.language in ['de', 'en-GB']"),
        (.appVersion(comparison: ">=", version: "2.1.0"), "app.version.>=(['2.1.0'])"),
        (.appVersion(comparison: "<", version: "3"), "app.version.<(['3'])"),
        (.percent(seed: "checkout", lower: "0", upper: "50"), "percent('checkout') between 0 and 50"),
        (.percent(seed: "", lower: "10", upper: "100"), "percent between 10 and 100"),
        (.customSignal(key: "level", comparison: .numberGreaterOrEqual, value: "5"), "app.customSignal['level'] >= 5"),
        (
            .customSignal(key: "plan", comparison: .exactlyMatches, value: "pro, team"),
            "app.customSignal['plan'].exactlyMatches(['pro', 'team'])"
        ),
        (
            .customSignal(key: "sdk", comparison: .versionGreater, value: "1.2.0"),
            "version(app.customSignal['sdk']) > '1.2.0'"
        ),
        (
            .dateRange(from: "2026-12-24T18:00", until: "2027-01-01T00:00:00", zone: "Europe/Berlin"),
            "dateTime >= dateTime('2026-12-24T18:00:00', 'Europe/Berlin') && dateTime < dateTime('2027-01-01T00:00:00', 'Europe/Berlin')"
        ),
        (.dateRange(from: "", until: "2027-01-01T00:00", zone: ""), "dateTime < dateTime('2027-01-01T00:00:00')"),
    ]

    @Test(arguments: 0..<cases.count)
    func everyRuleWritesFirebaseTextThatParses(index: Int) throws {
        let (rule, expected) = Self.cases[index]
        let text = try ConditionBuilder.expression(for: rule)
        #expect(text == expected)
        #expect(throws: Never.self) { try ConditionParser.parse(text) }
    }

    @Test func everySignalOperatorParses() throws {
        for signalOperator in ConditionBuilder.SignalOperator.allCases {
            let value =
                signalOperator.rawValue.hasPrefix("version")
                ? "1.2" : (signalOperator.rawValue.count <= 2 ? "-2.5" : "a")
            let text = try ConditionBuilder.expression(
                for: .customSignal(key: "k", comparison: signalOperator, value: value)
            )
            #expect(throws: Never.self, "\(text)") { try ConditionParser.parse(text) }
        }
    }

    @Test func quotesAndBackslashesAreEscapedAndReadBackUnchanged() throws {
        let key = #"it's \ "odd""#
        let values = [#"o'brien"#, #"back\slash"#, #"'];true || ['"#, "gold tier"]
        let text = try ConditionBuilder.expression(
            for: .customSignal(key: key, comparison: .contains, value: values.joined(separator: ","))
        )
        #expect(text.hasPrefix(#"app.customSignal['it\'s \\ "odd"'].contains(['o\'brien', 'back\\slash', '\']"#))
        let parsed = try ConditionParser.parse(text)
        let expected = ConditionExpression.attribute(
            AttributeCondition(subject: .customSignal(key), test: .string(.contains, values))
        )
        #expect(parsed == expected)
        #expect(ConditionBuilder.quote(#"a'b\c"#) == #"'a\'b\\c'"#)
    }

    @Test func badValuesAreRefusedWithAMessage() {
        let bad: [Rule] = [
            .country([]),
            .country(["Germany"]),
            .country(["D'"]),
            .language(["english please"]),
            .appVersion(comparison: "=>", version: "2"),
            .appVersion(comparison: ">=", version: "2.x"),
            .appVersion(comparison: ">=", version: "2') || true || app.version.>=(['1"),
            .percent(seed: "bad seed", lower: "0", upper: "10"),
            .percent(seed: "", lower: "50", upper: "10"),
            .percent(seed: "", lower: "0", upper: "101"),
            .customSignal(key: "", comparison: .numberEqual, value: "1"),
            .customSignal(key: "k", comparison: .numberEqual, value: "1 || true"),
            .customSignal(key: "line\nbreak", comparison: .contains, value: "a"),
            .dateRange(from: "", until: "", zone: "UTC"),
            .dateRange(from: "2026-02-30T00:00", until: "", zone: "UTC"),
            .dateRange(from: "2026-12-01T00:00", until: "", zone: "Mars/Olympus"),
        ]
        for rule in bad {
            #expect(throws: ConditionBuilder.Problem.self, "\(rule)") { try ConditionBuilder.expression(for: rule) }
        }
    }

    @Test func appendingJoinsWithAndAndKeepsAnOrTogether() throws {
        #expect(ConditionBuilder.appending("percent <= 5", to: "  ") == "percent <= 5")
        #expect(
            ConditionBuilder.appending("percent <= 5", to: "device.os == 'ios'") == "device.os == 'ios' && percent <= 5"
        )
        let joined = ConditionBuilder.appending("percent <= 5", to: "device.os == 'ios' || device.os == 'android'")
        #expect(joined == "(device.os == 'ios' || device.os == 'android') && percent <= 5")
        guard case .and(let parts) = try ConditionParser.parse(joined) else {
            Issue.record("not an && at the top: \(joined)")
            return
        }
        #expect(parts.count == 2)
    }

    @Test func theCheckMarksTheProblem() {
        let check = ConditionCheck("device.os == ios")
        #expect(!check.ok)
        #expect(check.column == 14)
        #expect(check.length == 3)
        #expect(check.before == "device.os == ")
        #expect(check.marked == "ios")
        #expect(check.after == "")
        let atEnd = ConditionCheck("percent <=")
        #expect(atEnd.column == 11)
        #expect(atEnd.length == 0)
        #expect(atEnd.marked == " ")
        #expect(ConditionCheck("true").ok)
        #expect(ConditionCheck("true").json.objectValue?["column"] == .null)
    }
}
