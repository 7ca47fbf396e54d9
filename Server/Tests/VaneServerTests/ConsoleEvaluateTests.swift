import Foundation
import HTTPTypes
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The console's "Who gets what" page over real HTTP, with the client fetch API and OFREP as the
/// oracles for what a context gets, and ``ValueChangeSample`` on templates whose counts can be
/// worked out by hand.
@Suite(.timeLimit(.minutes(5))) struct ConsoleEvaluateTests {
    static let production = "/projects/demo/environments/production"
    static let staging = "/projects/demo/environments/staging"

    /// One row of the page's table, as the person sees it.
    struct Row: Equatable {
        var value: String
        var source: String
        var reason: String
        var condition: String?
        var differs: Bool
    }

    /// The table's rows by key (HTML entities decoded).
    static func rows(in html: String) throws -> [String: Row] {
        let pattern =
            #"<tr data-search="[^"]*" data-differs="(yes|no)"[^>]*>\s*<th scope="row" data-label="Key"><span class="mono token">(?:<a href="[^"]*">)?([^<]*)(?:</a>)?</span>.*?<code class="value">([^<]*)</code>.*?<td data-label="Source">([^<]*) <span class="muted">\(([^)]*)\)</span></td>\s*<td data-label="Deciding condition">(?:<span class="mono">([^<]*)</span>|<span class="muted">none</span>)"#
        let regex = try NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
        var rows: [String: Row] = [:]
        let text = html as NSString
        for match in regex.matches(in: html, range: NSRange(location: 0, length: text.length)) {
            func group(_ index: Int) -> String? {
                let range = match.range(at: index)
                return range.location == NSNotFound ? nil : unescape(text.substring(with: range))
            }
            guard let key = group(2), let value = group(3), let source = group(4), let reason = group(5) else {
                continue
            }
            rows[key] = Row(
                value: value,
                source: source,
                reason: reason,
                condition: group(6),
                differs: group(1) == "yes"
            )
        }
        return rows
    }

    static func unescape(_ text: String) -> String {
        var result = text
        for (entity, character) in [
            ("&quot;", "\""), ("&#34;", "\""), ("&#39;", "'"), ("&#x27;", "'"), ("&lt;", "<"), ("&gt;", ">"),
            ("&#x2F;", "/"), ("&#x3D;", "="), ("&#x60;", "`"), ("&amp;", "&"),
        ] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return result
    }

    /// `…/evaluate?…` with each query value encoded.
    static func evaluatePath(_ query: [(String, String)], in environment: String = production) -> String {
        environment + "/evaluate?"
            + query.map { "\($0.0)=\(ConsolePaths.encodeQueryValue($0.1))" }.joined(separator: "&")
    }

    static func get(
        _ server: TestServer,
        _ path: String,
        as browser: ConsoleTests.Browser
    ) async throws
        -> TestServer.Reply
    {
        try await ConsoleTests.request(server, .get, path, cookie: browser.cookie)
    }

    // MARK: - The page against the API

    @Test(arguments: TestDatabase.allCases)
    func aContextGetsWhatTheFetchAPIGivesIt(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let clientKey = try await server.createKey(role: "client")
            // Ids on both sides of the checkout split, in and out of Germany, old and new apps.
            let contexts: [(id: String, country: String, version: String)] =
                (0..<12).map {
                    ("user-\($0)", $0 % 3 == 0 ? "DE" : ($0 % 3 == 1 ? "us" : ""), $0 % 2 == 0 ? "2.1.0" : "1.4")
                }
            var splitSides = Set<String>()
            for context in contexts {
                var query: [(String, String)] = [("id", context.id), ("version", context.version)]
                var json: JSONObject = [
                    "randomizationId": .string(context.id), "app.version": .string(context.version),
                ]
                if !context.country.isEmpty {
                    query.append(("country", context.country))
                    json["device.country"] = .string(context.country)
                }
                let page = try await Self.get(server, Self.evaluatePath(query), as: viewer)
                #expect(page.status == .ok)
                let rows = try Self.rows(in: page.text)

                let fetched = try await server.send(
                    .post,
                    TestServer.demoPath + "/fetch",
                    key: clientKey,
                    json: ["context": .object(json)]
                )
                let entries = try #require(fetched.object?["entries"]?.objectValue)
                let ofrep = try await server.evaluateAll(key: clientKey, context: .object(json))
                #expect(Set(rows.keys) == Set(entries.keys), "every key of the template, no other")
                for (key, row) in rows {
                    #expect(row.value == entries[key]?.stringValue, "\(key) for \(context)")
                    let reason = try #require(ofrep.flag(key)?["reason"]?.stringValue)
                    let decidedByCondition = reason == "TARGETING_MATCH" || reason == "SPLIT"
                    #expect(row.reason == (decidedByCondition ? "conditionalValue" : "defaultValue"), "\(key)")
                    #expect(row.source == (decidedByCondition ? "conditional" : "default"), "\(key)")
                    #expect((row.condition != nil) == decidedByCondition, "\(key)")
                }
                // The deciding conditions by name, from the demo template's rules.
                let german = context.country == "DE"
                #expect(rows["banner_text"]?.condition == (german ? "germany_austria" : nil))
                #expect(rows["settings_layout"]?.condition == (context.version == "2.1.0" ? "new_app_versions" : nil))
                let onePage = entries["checkout_variant"] == "one_page"
                #expect(rows["checkout_variant"]?.condition == (onePage ? "checkout_test_b" : nil))
                splitSides.insert(onePage ? "one_page" : "control")
            }
            #expect(splitSides == ["one_page", "control"], "the ids fall on both sides of the split")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func comparingWithAnotherEnvironmentMarksExactlyTheKeysThatDiffer(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            // Staging: a new German banner, a key production lacks; the rest as in production.
            var template = DemoProject.template
            let banner = try #require(template.parameter(forKey: "banner_text"))
            var changed = banner
            changed.conditionalValues = [ConditionalValue(conditionName: "germany_austria", value: .value("Hallo!"))]
            template = try #require(TemplateEdits.replacing(changed, in: template))
            template.parameters.append(TemplateParameter(key: "staging_only", defaultValue: .value("yes")))
            let published = try await server.publish(
                template.json(),
                path: "/v1/projects/demo/environments/staging"
            )
            try #require(published.status == .ok, "\(published.text)")
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let query = [("id", "user-1"), ("country", "AT"), ("version", "2.1.0"), ("compare", "environment:staging")]
            let page = try await Self.get(server, Self.evaluatePath(query), as: viewer)
            #expect(page.status == .ok)
            let rows = try Self.rows(in: page.text)
            #expect(Set(rows.filter { $0.value.differs }.keys) == ["banner_text", "staging_only"])
            #expect(rows["staging_only"]?.value == "(not in this template)")
            #expect(page.text.contains("Value in Staging"))
            #expect(page.text.contains("Differs"))

            // Only the differences.
            let only = try await Self.get(server, Self.evaluatePath(query + [("only", "differences")]), as: viewer)
            #expect(Set(try Self.rows(in: only.text).keys) == ["banner_text", "staging_only"])
            // Outside Germany and Austria the banner is the same, so only the new key differs.
            let american = try await Self.get(
                server,
                Self.evaluatePath([("country", "US"), ("compare", "environment:staging")]),
                as: viewer
            )
            #expect(Set(try Self.rows(in: american.text).filter { $0.value.differs }.keys) == ["staging_only"])
            // Without a draft there is no draft to compare with.
            #expect(!page.text.contains("Your draft"))
            // The text filter narrows the rows.
            let filtered = try await Self.get(server, Self.evaluatePath(query + [("q", "checkout")]), as: viewer)
            #expect(Set(try Self.rows(in: filtered.text).keys) == ["checkout_variant"])
        }
    }

    // MARK: - Saved contexts

    @Test(arguments: TestDatabase.allCases)
    func savedContextsAreSavedUsedAndDeletedByEditorsAndUsedByViewers(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/production"])
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let name = "German iOS user on 2.1"
            let context = [
                "id": "user-7", "country": "DE", "os": "ios", "version": "2.1.0", "signals": "plan=pro\nseats=12",
            ]
            let save = Self.production + "/evaluate/contexts"

            // Viewers may not save; editors only where they may publish.
            var form = context.merging(["_csrf": viewer.csrf, "name": name]) { $1 }
            #expect(
                try await ConsoleTests.request(server, .post, save, form: form, cookie: viewer.cookie).status
                    == .forbidden
            )
            form["_csrf"] = editor.csrf
            let elsewhere = try await ConsoleTests.request(
                server,
                .post,
                Self.staging + "/evaluate/contexts",
                form: form,
                cookie: editor.cookie
            )
            #expect(elsewhere.status == .forbidden)
            // Names: not empty, at most 100 characters.
            for bad in ["", "   ", String(repeating: "n", count: 101)] {
                var badForm = form
                badForm["name"] = bad
                let refused = try await ConsoleTests.request(server, .post, save, form: badForm, cookie: editor.cookie)
                #expect(refused.status == .badRequest)
                #expect(refused.text.contains("id=\"save-name-error\""))
            }
            let empty = try await Self.get(server, Self.production + "/evaluate", as: viewer)
            #expect(!empty.text.contains(name))

            let saved = try await ConsoleTests.request(server, .post, save, form: form, cookie: editor.cookie)
            #expect(saved.status == .seeOther)
            let location = try #require(saved.headers[.location])
            #expect(location.hasPrefix(Self.production + "/evaluate?saved=German%20iOS"))

            // The viewer uses it: the fields fill in and the values are the German 2.1 user's.
            let used = try await Self.get(
                server,
                Self.evaluatePath([("saved", name)]),
                as: viewer
            )
            #expect(used.status == .ok)
            #expect(used.text.contains("<option value=\"\(name)\" selected>"))
            #expect(used.text.contains("id=\"context-country\" name=\"country\" type=\"text\" value=\"DE\""))
            let rows = try Self.rows(in: used.text)
            #expect(rows["banner_text"]?.value == "Willkommen bei Vane!")
            #expect(rows["banner_text"]?.condition == "germany_austria")
            #expect(rows["settings_layout"]?.condition == "new_app_versions")
            #expect(!used.text.contains("Save this context as"), "viewers get no save form")
            #expect(!used.text.contains("/evaluate/contexts/delete"), "nor delete buttons")
            let editorsView = try await Self.get(server, Self.evaluatePath([("saved", name)]), as: editor)
            #expect(editorsView.text.contains("Save this context as"))

            // What was stored is the context in the evaluation API's shape.
            let stored = try await DraftStore(engine: server.application.store.engine).savedContexts(projectId: "demo")
            #expect(stored.map(\.name) == [name])
            #expect(
                stored.first?.context
                    == [
                        "randomizationId": "user-7", "app.version": "2.1.0", "device.country": "DE", "device.os": "ios",
                        "plan": "pro", "seats": 12,
                    ]
            )

            // Deleting: viewers may not, editors may.
            let delete = Self.production + "/evaluate/contexts/delete"
            let viewerDelete = try await ConsoleTests.request(
                server,
                .post,
                delete,
                form: ["_csrf": viewer.csrf, "name": name],
                cookie: viewer.cookie
            )
            #expect(viewerDelete.status == .forbidden)
            let deleted = try await ConsoleTests.request(
                server,
                .post,
                delete,
                form: ["_csrf": editor.csrf, "name": name],
                cookie: editor.cookie
            )
            #expect(deleted.status == .seeOther)
            let after = try await Self.get(server, Self.production + "/evaluate", as: viewer)
            #expect(!after.text.contains(name))
            #expect(
                try await DraftStore(engine: server.application.store.engine).savedContexts(projectId: "demo").isEmpty
            )
        }
    }

    // MARK: - Bad input

    @Test(arguments: TestDatabase.allCases)
    func badInputShowsWhatWasExpectedAtTheField(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let cases: [(query: [(String, String)], field: String, message: String)] = [
                ([("version", "2.x")], "version", "expected a version such as 2.1.0"),
                ([("country", "Germany")], "country", "expected a two-letter country code"),
                ([("language", "de DE")], "language", "expected a language tag"),
                ([("signals", "plan=pro\nbeta=[1,")], "signals", "line 2: beta&#39;s value is not valid JSON"),
                ([("signals", "device.model=x")], "signals", "unknown attribute"),
                ([("signals", "plan")], "signals", "line 1: expected name=value"),
                ([("signals", #"plan={"a": 1}"#)], "signals", "found an object"),
                ([("signals", "ids=[1, 2]")], "signals", "expected a string in an attribute list"),
            ]
            for test in cases {
                let page = try await Self.get(server, Self.evaluatePath(test.query), as: viewer)
                #expect(page.status == .ok)
                let errorId = "context-\(test.field)-error"
                let marker = "<span class=\"field-error\" id=\"\(errorId)\">"
                let start = try #require(page.text.range(of: marker), "\(test.query): no error at \(test.field)")
                let message = page.text[start.upperBound...].prefix { $0 != "<" }
                #expect(
                    Self.unescape(String(message)).contains(Self.unescape(test.message)),
                    "\(test.query): \(message)"
                )
                #expect(page.text.contains("aria-describedby=\"context-\(test.field)-hint \(errorId)\""))
                #expect(try Self.rows(in: page.text).isEmpty, "no values for a context with errors")
            }
            // A good context next to them has no error.
            let good = try await Self.get(
                server,
                Self.evaluatePath([("version", "2.1"), ("country", "at"), ("signals", "beta=true\nlist=[\"a\"]")]),
                as: viewer
            )
            #expect(!good.text.contains("field-error\" id="))
            #expect(try Self.rows(in: good.text)["banner_text"]?.value == "Willkommen bei Vane!")
        }
    }

    // MARK: - ValueChangeSample

    static func compiled(
        _ conditions: [TemplateCondition],
        _ parameters: [TemplateParameter]
    ) throws
        -> CompiledTemplate
    {
        try CompiledTemplate(ConfigTemplate(conditions: conditions, parameters: parameters))
    }

    @Test func changesCountTheContextsThatGetAnotherValue() throws {
        let germany = TemplateCondition(name: "germany", expression: "device.country in ['DE']")
        let before = try Self.compiled(
            [germany],
            [
                TemplateParameter(
                    key: "banner",
                    defaultValue: .value("Hi"),
                    conditionalValues: [ConditionalValue(conditionName: "germany", value: .value("Hallo"))]
                ),
                TemplateParameter(key: "same", defaultValue: .value("1")),
                TemplateParameter(key: "removed", defaultValue: .value("x")),
                TemplateParameter(key: "left_to_app", defaultValue: .useInAppDefault),
            ]
        )
        let after = try Self.compiled(
            [germany],
            [
                TemplateParameter(key: "banner", defaultValue: .value("Hi")),
                TemplateParameter(key: "same", defaultValue: .value("1")),
                TemplateParameter(key: "added", defaultValue: .value("y")),
                TemplateParameter(
                    key: "left_to_app",
                    defaultValue: .useInAppDefault,
                    conditionalValues: [ConditionalValue(conditionName: "germany", value: .value("on"))]
                ),
            ]
        )
        let contexts = [
            EvaluationContext(attributes: ["device.country": "DE"]),
            EvaluationContext(attributes: ["device.country": "AT"]),
            EvaluationContext(),
            EvaluationContext(randomizationId: "x", attributes: ["device.country": "de"]),
            EvaluationContext(attributes: ["device.country": "US"]),
        ]
        let changes = ValueChangeSample.changes(from: before, to: after, contexts: contexts)
        #expect(changes.map(\.key) == ["added", "banner", "left_to_app", "removed", "same"])
        let counts = Dictionary(uniqueKeysWithValues: changes.map { ($0.key, $0.changed) })
        // The two German contexts (country matching ignores case) lose "Hallo" and gain "on".
        #expect(counts == ["added": 5, "banner": 2, "left_to_app": 2, "removed": 5, "same": 0])
        #expect(changes.allSatisfy { $0.of == 5 })
        #expect(ValueChangeSample.changes(from: before, to: before, contexts: contexts).allSatisfy { $0.changed == 0 })
        #expect(ValueChangeSample.changes(from: before, to: after, contexts: []).allSatisfy { $0.of == 0 })
    }

    @Test func sampledContextsSplitAPercentConditionAboutInHalf() throws {
        func template(_ expression: String) -> ConfigTemplate {
            ConfigTemplate(
                conditions: [TemplateCondition(name: "split", expression: expression)],
                parameters: [
                    TemplateParameter(
                        key: "variant",
                        defaultValue: .value("a"),
                        conditionalValues: [ConditionalValue(conditionName: "split", value: .value("b"))]
                    )
                ]
            )
        }
        let everyoneA = try Self.compiled([], [TemplateParameter(key: "variant", defaultValue: .value("a"))])
        let lower = template("percent('exp') <= 50")
        let contexts = ValueChangeSample.contexts(savedContexts: [], templates: [lower], count: 1_000, seed: 42)
        #expect(contexts.count == 1_000)
        #expect(Set(contexts.compactMap(\.randomizationId)).count == 1_000, "every id differs")
        func changed(_ template: ConfigTemplate) throws -> Int {
            try #require(
                ValueChangeSample.changes(from: everyoneA, to: CompiledTemplate(template), contexts: contexts).first
            ).changed
        }
        let lowerHalf = try changed(lower)
        let upperHalf = try changed(template("percent('exp') > 50"))
        // The two halves cover each context exactly once; 0 % and 100 % are none and all.
        #expect(lowerHalf + upperHalf == 1_000)
        #expect((450...550).contains(lowerHalf), "\(lowerHalf) of 1,000")
        #expect(try changed(template("percent('exp') <= 0")) == 0)
        #expect(try changed(template("percent('exp') <= 100")) == 1_000)
        // A seed gives the same sample every time, another seed another one.
        #expect(ValueChangeSample.contexts(savedContexts: [], templates: [lower], count: 1_000, seed: 42) == contexts)
        let other = ValueChangeSample.contexts(savedContexts: [], templates: [lower], count: 1_000, seed: 43)
        #expect(Set(other.compactMap(\.randomizationId)).isDisjoint(with: contexts.compactMap(\.randomizationId)))
    }

    @Test func sampledAttributesComeFromTheConditionsOrAreLeftOut() throws {
        let live = ConfigTemplate(
            conditions: [
                TemplateCondition(name: "dach", expression: "device.country in ['DE', 'AT'] && device.os == 'ios'"),
                TemplateCondition(name: "pro", expression: "app.customSignal['plan'].exactlyMatches(['pro'])"),
            ],
            parameters: []
        )
        let draft = ConfigTemplate(
            conditions: [TemplateCondition(name: "swiss", expression: "device.country in ['CH']")],
            parameters: []
        )
        let saved = [
            SavedContext(projectId: "demo", name: "a", context: ["randomizationId": "saved-1"], createTime: 0),
            SavedContext(projectId: "demo", name: "broken", context: ["nested": ["no": 1]], createTime: 0),
        ]
        let contexts = ValueChangeSample.contexts(savedContexts: saved, templates: [live, draft], count: 400, seed: 1)
        #expect(contexts.count == 401, "the saved context that reads, then the synthetic ones")
        #expect(contexts.first == EvaluationContext(randomizationId: "saved-1"))
        let synthetic = contexts.dropFirst()
        #expect(synthetic.allSatisfy { Set($0.attributes.keys).isSubset(of: ["device.country", "device.os", "plan"]) })
        let countries = Set(synthetic.map { $0["device.country"] })
        #expect(countries == [nil, .string("DE"), .string("AT"), .string("CH")])
        #expect(Set(synthetic.map { $0["device.os"] }) == [nil, .string("ios")])
        #expect(Set(synthetic.map { $0["plan"] }) == [nil, .string("pro")])
    }

    @Test func theExplanationIsTheOneTheCLIPrints() throws {
        let template = try Self.compiled(
            [TemplateCondition(name: "germany", expression: "device.country in ['DE']")],
            [
                TemplateParameter(
                    key: "banner",
                    defaultValue: .value("Hi"),
                    conditionalValues: [ConditionalValue(conditionName: "germany", value: .value("Hallo"))]
                ),
                TemplateParameter(key: "app", defaultValue: .useInAppDefault),
            ]
        )
        let result = template.evaluate(EvaluationContext(attributes: ["device.country": "DE"]))
        let banner = try #require(result.resolution(forKey: "banner"))
        #expect(
            ResolutionExplanation(banner).json
                == ["value": "Hallo", "source": "remote", "reason": "conditionalValue", "condition": "germany"]
        )
        let app = try #require(result.resolution(forKey: "app"))
        #expect(
            ResolutionExplanation(app, inAppDefault: "7").json
                == ["value": "7", "source": "inAppDefault", "reason": "useInAppDefault"]
        )
        #expect(ResolutionExplanation(app).json == ["value": .null, "source": "none", "reason": "useInAppDefault"])
    }

    // MARK: - Every condition's state

    @Test func conditionStatesMarkMatchedShadowedAndNotMatchedWithPercentBuckets() throws {
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(name: "germany", expression: "device.country in ['DE']"),
                TemplateCondition(name: "ios", expression: "device.os == 'ios'"),
                TemplateCondition(name: "half", expression: "percent('split') <= 50 || percent <= 1"),
            ],
            parameters: [
                TemplateParameter(
                    key: "banner",
                    defaultValue: .value("Hi"),
                    conditionalValues: [
                        ConditionalValue(conditionName: "half", value: .value("Split")),
                        ConditionalValue(conditionName: "ios", value: .value("iOS")),
                        ConditionalValue(conditionName: "germany", value: .value("Hallo")),
                    ]
                )
            ]
        )
        let context = EvaluationContext(
            randomizationId: "user-7",
            attributes: ["device.country": "DE", "device.os": "ios"]
        )
        let states = try ConditionStates(context: context, template: template)
        let banner = try #require(template.parameter(forKey: "banner"))
        // Template order decides: germany first, then ios (shadowed by germany), then half.
        let split = PercentBucket.microPercentile(seed: "split", randomizationId: "user-7")
        let unseeded = PercentBucket.microPercentile(seed: "", randomizationId: "user-7")
        let halfMatches = split <= 50_000_000 || unseeded <= 1_000_000
        #expect(
            states.states(of: banner, in: template).map { $0.state }
                == [.matched, .shadowed(by: "germany"), halfMatches ? .shadowed(by: "germany") : .notMatched]
        )
        #expect(
            states.percents["half"]
                == [
                    .init(seed: "split", microPercentile: split, inRange: split <= 50_000_000),
                    .init(seed: "", microPercentile: unseeded, inRange: unseeded <= 1_000_000),
                ]
        )
        #expect(states.percents["germany"] == nil)
        let french = try ConditionStates(
            context: EvaluationContext(attributes: ["device.country": "FR"]),
            template: template
        )
        #expect(french.states(of: banner, in: template).map { $0.state } == [.notMatched, .notMatched, .notMatched])
        #expect(french.percents.isEmpty, "no randomization id, no bucket")
    }

    @Test(arguments: TestDatabase.allCases)
    func thePageMarksEveryConditionAndLinksEachFlagToItsEditor(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            // banner_text also gets a value for new app versions, which a German 2.1 user matches
            // too: germany_austria comes first, so that value is shadowed.
            let current = try await server.send(.get, TestServer.demoPath + "/template")
            var template = try ConfigTemplate(json: try #require(current.json))
            var banner = try #require(template.parameter(forKey: "banner_text"))
            banner.conditionalValues.append(ConditionalValue(conditionName: "new_app_versions", value: .value("New!")))
            template = try #require(TemplateEdits.replacing(banner, in: template))
            #expect(try await server.publish(template.json()).status == .ok)
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await Self.get(
                server,
                Self.evaluatePath([("id", "user-7"), ("country", "DE"), ("version", "2.1.0")]),
                as: viewer
            )
            #expect(page.status == .ok)
            #expect(
                page.text.contains(
                    #"<a href="/projects/demo/environments/production/flags/banner_text/edit">banner_text</a>"#
                )
            )
            let bannerRow = try #require(
                page.text.range(of: "banner_text</a>").map { String(page.text[$0.upperBound...].prefix(2_000)) }
            )
            #expect(bannerRow.contains(#"germany_austria</span> <span class="tag state-matched">Matched</span>"#))
            #expect(
                bannerRow.contains(
                    #"new_app_versions</span> <span class="tag state-shadowed">Shadowed</span> <span class="muted">matches, but germany_austria comes first</span>"#
                )
            )
            let bucket = PercentBucket.microPercentile(seed: "checkout_test", randomizationId: "user-7")
            let inRange = bucket > 50_000_000
            let checkout = try #require(
                page.text.range(of: "checkout_variant</a>").map { String(page.text[$0.upperBound...].prefix(2_000)) }
            )
            #expect(checkout.contains(inRange ? "state-matched\">Matched" : "state-not-matched\">Not matched"))
            let percent = String(format: "%.6f %%", Double(bucket) / 1_000_000)
            #expect(
                checkout.contains("bucket \(percent) (seed checkout_test): \(inRange ? "in range" : "out of range")")
            )
            let rows = try Self.rows(in: page.text)
            #expect(rows["checkout_variant"]?.value == (inRange ? "one_page" : "control"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func saveContextSendsTheFieldsAsEditedNotTheShownContext(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/production"])
            let page = try await Self.get(server, Self.evaluatePath([("country", "DE")]), as: editor)
            // The save button belongs to the form whose fields people edit; no second form
            // carries the shown context's values in hidden inputs.
            let start = try #require(page.text.range(of: "aria-label=\"Context\""))
            let form = String(page.text[start.upperBound...])
            let end = try #require(form.range(of: "</form>"))
            let contextForm = String(form[..<end.lowerBound])
            #expect(contextForm.contains("id=\"context-country\" name=\"country\" type=\"text\" value=\"DE\""))
            #expect(
                contextForm.contains(
                    "formmethod=\"post\" formaction=\"/projects/demo/environments/production/evaluate/contexts\">Save context</button>"
                )
            )
            #expect(!page.text.contains("aria-label=\"Save this context\""))
            // Posting the form as a browser sends it after editing the country saves the edit.
            let saved = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/evaluate/contexts",
                form: ["_csrf": editor.csrf, "country": "AT", "name": "Austrian", "compare": "", "q": ""],
                cookie: editor.cookie
            )
            #expect(saved.status == .seeOther)
            let stored = try await DraftStore(engine: server.application.store.engine).savedContexts(projectId: "demo")
            #expect(stored.first?.context == ["device.country": "AT"])

            // The grid of saved contexts × flags: the Austrian gets the German banner.
            let grid = try await Self.get(server, Self.production + "/evaluate", as: editor)
            #expect(grid.text.contains("<summary>Every saved context × every flag</summary>"))
            #expect(
                grid.text.contains(
                    #"<th scope="col"><a class="mono token" href="/projects/demo/environments/production/flags/banner_text/edit">banner_text</a></th>"#
                )
            )
            let austrian = try #require(
                grid.text.range(of: "<th scope=\"row\">Austrian</th>").map {
                    String(grid.text[$0.upperBound...].prefix(400))
                }
            )
            // Columns in template order: payments_enabled, banner_text, …
            #expect(
                austrian.hasPrefix(
                    "<td><code class=\"value\">true</code></td><td><code class=\"value\">Willkommen bei Vane!</code></td>"
                )
            )
        }
    }
}
