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

    @Test func aConditionThatSaysSomethingElseInTheTargetIsRefused() {
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
        #expect(throws: FlagCopyRefusal.flagExists("other")) {
            try FlagCopying.adding(TemplateParameter(key: "other"), to: Self.source)
        }
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
            let chooser = try await ConsoleTests.request(
                server,
                .get,
                stagingFlags + "/banner_text/copy",
                cookie: releaser.cookie
            )
            #expect(chooser.status == .ok)
            #expect(chooser.text.contains("<option value=\"production\" selected>"))
            let chosen = try await ConsoleTests.request(
                server,
                .get,
                stagingFlags + "/banner_text/copy?to=production",
                cookie: releaser.cookie
            )
            #expect(chosen.status == .seeOther)
            let preview = try #require(chosen.headers[.location])
            #expect(preview == production + "/copy?from=staging&flag=banner_text")
            let shown = try await ConsoleTests.request(server, .get, preview, cookie: releaser.cookie)
            #expect(shown.status == .ok)
            #expect(shown.text.contains("Who would see a different value"))
            #expect(shown.text.contains("Staging says hello"))
            #expect(shown.text.contains("Copy into my draft of Production"))

            // Someone who may not publish in production is refused the preview and the copy.
            let refused = try await ConsoleTests.request(server, .get, preview, cookie: stagingOnly.cookie)
            #expect(refused.status == .forbidden)
            let form = ["from": "staging", "flag": "banner_text"]
            let refusedCopy = try await ConsoleTests.request(
                server,
                .post,
                production + "/copy",
                form: form.merging(["_csrf": stagingOnly.csrf]) { $1 },
                cookie: stagingOnly.cookie
            )
            #expect(refusedCopy.status == .forbidden)

            let copied = try await ConsoleTests.request(
                server,
                .post,
                production + "/copy",
                form: form.merging(["_csrf": releaser.csrf]) { $1 },
                cookie: releaser.cookie
            )
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
}
