import Foundation
import HTTPTypes
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// Copying a flag between environments: the rule (``FlagCopying``), the API's preview and the
/// console's copy into a draft, with its diff and impact sample.
@Suite(.timeLimit(.minutes(5))) struct FlagCopyingTests {
    static let staging = "/v1/projects/demo/environments/staging"

    /// A source with `checkout_variant` on a percent split, and a target without either.
    static let source = ConfigTemplate(
        conditions: [
            TemplateCondition(name: "germany", expression: "device.country in ['de']"),
            TemplateCondition(name: "half", expression: "percent('split') <= 50"),
        ],
        parameters: [
            TemplateParameter(
                key: "checkout_variant",
                defaultValue: .value("control"),
                conditionalValues: [ConditionalValue(conditionName: "half", value: .value("one_page"))],
                valueType: .string
            ),
            TemplateParameter(key: "other", defaultValue: .value("x")),
        ]
    )

    @Test func aCopyBringsTheValuesAndOnlyTheConditionsTheyNeed() throws {
        let target = ConfigTemplate(
            conditions: [TemplateCondition(name: "ios", expression: "device.os == 'ios'")],
            parameters: [TemplateParameter(key: "banner", defaultValue: .value("hi"))]
        )
        let copy = try FlagCopying.copy("checkout_variant", from: Self.source, into: target)
        #expect(copy.addedConditions == ["half"])
        #expect(!copy.replaced)
        #expect(copy.template.conditions.map(\.name) == ["ios", "half"])
        #expect(
            copy.template.parameter(forKey: "checkout_variant") == Self.source.parameter(forKey: "checkout_variant")
        )
        #expect(copy.template.parameter(forKey: "other") == nil)
        #expect(copy.template.parameter(forKey: "banner") != nil)
    }

    @Test func aCopyReplacesTheTargetsFlagWhereItLives() throws {
        var target = ConfigTemplate(conditions: Self.source.conditions)
        target.parameterGroups = [
            ParameterGroup(
                name: "checkout",
                parameters: [TemplateParameter(key: "checkout_variant", defaultValue: .value("old"))]
            )
        ]
        let copy = try FlagCopying.copy("checkout_variant", from: Self.source, into: target)
        #expect(copy.replaced)
        #expect(copy.addedConditions == [])
        #expect(copy.template.parameters.isEmpty)
        #expect(copy.template.parameterGroups.first?.parameters.first?.defaultValue == .value("control"))
    }

    @Test func aConditionThatSaysSomethingElseInTheTargetIsRefused() throws {
        let target = ConfigTemplate(conditions: [TemplateCondition(name: "half", expression: "percent('split') <= 10")])
        #expect(
            throws: FlagCopyRefusal.conditionDiffers(
                "half",
                source: "percent('split') <= 50",
                target: "percent('split') <= 10"
            )
        ) {
            try FlagCopying.copy("checkout_variant", from: Self.source, into: target)
        }
        #expect(throws: FlagCopyRefusal.noSuchFlag("missing")) {
            try FlagCopying.copy("missing", from: Self.source, into: target)
        }
        #expect(throws: FlagCopyRefusal.flagExists("checkout_variant")) {
            try FlagCopying.adding("checkout_variant", from: Self.source, into: Self.source)
        }
        let added = try FlagCopying.adding("checkout_variant", from: Self.source, into: ConfigTemplate())
        #expect(
            added.template.parameter(forKey: "checkout_variant") == Self.source.parameter(forKey: "checkout_variant")
        )
        #expect(!added.replaced)
        #expect(!added.addedConditions.isEmpty, "the conditions it needs come along")
    }

    /// Staging gets its own banner, so a copy to production changes something.
    static func changeStagingBanner(_ server: TestServer) async throws {
        let current = try await server.send(.get, Self.staging + "/template")
        let text = current.text.replacingOccurrences(of: "Welcome to Vane!", with: "Staging says hello")
        let reply = try await server.publish(try JSONValue.parse(text), path: Self.staging)
        #expect(reply.status == .ok)
    }

    @Test(arguments: TestDatabase.allCases)
    func theAPIAnswersTheTargetTemplateWithTheCopyItsDiffAndItsImpact(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.changeStagingBanner(server)
            let reply = try await server.send(
                .post,
                Self.staging + "/flags/banner_text/copy",
                json: ["to": "production"]
            )
            #expect(reply.status == .ok)
            let body = try #require(reply.object)
            #expect(body["replaced"] == true)
            #expect(body["versionNumber"] == "1")
            #expect(reply.etag != nil)
            #expect(body["changes"]?.objectValue?["parameters"]?.objectValue?["changed"] == ["banner_text"])
            let impact = try #require(body["impact"]?.objectValue?["keys"]?.arrayValue?.first?.objectValue)
            #expect(impact["key"] == "banner_text")
            // Everyone outside Germany and Austria gets the new default.
            #expect((impact["changed"]?.numberValue?.intValue ?? 0) > 0)
            let template = try ConfigTemplate(json: try #require(body["template"]))
            #expect(template.parameter(forKey: "banner_text")?.defaultValue == .value("Staging says hello"))
            // Nothing was published: production is as it was.
            let live = try await server.send(.get, TestServer.demoPath + "/template")
            #expect(live.text.contains("Welcome to Vane!"))

            // Refusals: no such flag (404), the same environment, no target (400).
            let missing = try await server.send(.post, Self.staging + "/flags/nothing/copy", json: ["to": "production"])
            #expect(missing.status == .notFound)
            let same = try await server.send(.post, Self.staging + "/flags/banner_text/copy", json: ["to": "staging"])
            #expect(same.status == .badRequest)
            let none = try await server.send(.post, Self.staging + "/flags/banner_text/copy", json: [:])
            #expect(none.status == .badRequest)
            let nowhere = try await server.send(
                .post,
                Self.staging + "/flags/banner_text/copy",
                json: ["to": "nowhere"]
            )
            #expect(nowhere.status == .notFound)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theConsoleCopiesIntoTheTargetsDraftAfterShowingTheDiffAndSample(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try await Self.changeStagingBanner(server)
            let releaser = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/production"])
            let stagingOnly = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let stagingFlags = "/projects/demo/environments/staging/flags"
            let production = "/projects/demo/environments/production"

            // The chooser lists where the person may publish, and sends them to the target's preview.
            let chooser = try await releaser.get(server, stagingFlags + "/banner_text/copy")
            #expect(chooser.status == .ok)
            #expect(chooser.text.contains("<option value=\"production\" selected>"))
            let chosen = try await releaser.get(server, stagingFlags + "/banner_text/copy?to=production")
            #expect(chosen.status == .seeOther)
            let preview = try #require(chosen.headers[.location])
            #expect(preview == production + "/copy?from=staging&flag=banner_text")
            let shown = try await releaser.get(server, preview)
            #expect(shown.status == .ok)
            #expect(shown.text.contains("Who would see a different value"))
            #expect(shown.text.contains("Staging says hello"))
            #expect(shown.text.contains("Copy into my draft of Production"))

            // Someone who may not publish in production is refused the preview and the copy.
            let refused = try await stagingOnly.get(server, preview)
            #expect(refused.status == .forbidden)
            let form = ["from": "staging", "flag": "banner_text"]
            let refusedCopy = try await stagingOnly.post(server, production + "/copy", form)
            #expect(refusedCopy.status == .forbidden)

            let copied = try await releaser.post(server, production + "/copy", form)
            #expect(copied.status == .seeOther)
            #expect(copied.headers[.location] == production + "/review")
            let drafts = DraftStore(engine: server.application.store.engine)
            let key = EnvironmentKey(projectId: "demo", environmentId: "production")
            let userId = try #require(try await drafts.drafts(key).first?.userId)
            let draft = try await drafts.draft(key, userId: userId)
            #expect(draft?.template.parameter(forKey: "banner_text")?.defaultValue == .value("Staging says hello"))
            // Into the draft only: production's live template is unchanged.
            let live = try await server.send(.get, TestServer.demoPath + "/template")
            #expect(live.text.contains("Welcome to Vane!"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aNewFlagGoesIntoTheDraftsOfEveryEnvironmentTickedOrNone(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let both = try await ConsoleTests.signIn(
                server,
                role: "editor",
                environments: ["demo/production", "demo/staging"]
            )
            let productionOnly = try await ConsoleTests.signIn(
                server,
                role: "editor",
                environments: ["demo/production"]
            )
            let production = "/projects/demo/environments/production"
            let drafts = DraftStore(engine: server.application.store.engine)
            // Only `both` saves drafts here, so an environment's one draft is theirs.
            func draft(_ environment: String) async throws -> ConfigTemplate? {
                let key = EnvironmentKey(projectId: "demo", environmentId: environment)
                guard let userId = try await drafts.drafts(key).first?.userId else { return nil }
                return try await drafts.draft(key, userId: userId)?.template
            }

            // The new-flag page offers the other environments the person may publish in.
            let page = try await both.get(server, production + "/flags/new")
            #expect(page.text.contains("Also add it to"))
            #expect(page.text.contains("name=\"also_staging\""))
            let narrow = try await productionOnly.get(server, production + "/flags/new")
            #expect(!narrow.text.contains("also_staging"), "no checkbox for where the person may not publish")

            // Staging already has spring_banner: nothing is saved anywhere, and the page says why.
            let springOnStaging = try await server.send(.get, Self.staging + "/template")
            var stagingTemplate = try ConfigTemplate(data: Array(springOnStaging.text.utf8))
            stagingTemplate.parameters.append(TemplateParameter(key: "spring_banner", defaultValue: .value("x")))
            #expect(try await server.publish(stagingTemplate.json(), path: Self.staging).status == .ok)
            let form: [String: String] = [
                "key": "spring_banner", "type": "STRING", "default_mode": "value",
                "default_value": "Spring!", "c0_name": "germany_austria", "c0_mode": "value", "c0_value": "Frühling!",
                "also_staging": "on",
            ]
            let refused = try await both.post(server, production + "/flags/new", form)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("not added to Staging"), "\(refused.text.prefix(400))")
            #expect(try await draft("production")?.parameter(forKey: "spring_banner") == nil)

            // Another key: both drafts get it, with the condition it uses.
            let saved = try await both.post(
                server,
                production + "/flags/new",
                form.merging(["key": "autumn_banner"]) { $1 }
            )
            #expect(saved.status == .seeOther)
            #expect(saved.headers[.location]?.hasSuffix("/flags/autumn_banner/edit?saved=2") == true)
            let productionDraft = try #require(try await draft("production"))
            let stagingDraft = try #require(try await draft("staging"))
            #expect(
                productionDraft.parameter(forKey: "autumn_banner") == stagingDraft.parameter(forKey: "autumn_banner")
            )
            #expect(stagingDraft.condition(named: "germany_austria") != nil)
            let shown = try await both.get(server, try #require(saved.headers[.location]))
            #expect(shown.text.contains("Saved to your drafts of 2 environments"))
        }
    }
}
