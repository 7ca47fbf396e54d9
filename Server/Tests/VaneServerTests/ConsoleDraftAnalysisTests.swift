import Foundation
import HTTPTypes
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// A node keeps what a draft changes (its diff, problems and sampled users) between page loads;
/// it must never show it for a draft or live version other than the one it was worked out for.
@Suite(.timeLimit(.minutes(5))) struct ConsoleDraftAnalysisTests {
    static let production = ConsoleDraftTests.production
    static let productionKey = EnvironmentKey(projectId: "demo", environmentId: "production")

    static func review(_ server: TestServer, _ browser: ConsoleTests.Browser) async throws -> String {
        let page = try await ConsoleTests.request(server, .get, production + "/review", cookie: browser.cookie)
        #expect(page.status == .ok)
        return page.text
    }

    @Test(arguments: TestDatabase.allCases)
    func theReviewFollowsADraftChangedOnAnotherNodeAndANewLiveVersion(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let ana = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/*"])
            let saved = try await ConsoleTests.request(
                server,
                .post,
                Self.production + "/flags/banner_text/edit",
                form: ConsoleDraftTests.editorForm(ana, type: "STRING", defaultValue: "Winter sale"),
                cookie: ana.cookie
            )
            #expect(saved.status == .seeOther, "\(saved.text)")
            let first = try await Self.review(server, ana)
            #expect(first.contains("Winter sale"))
            #expect(first.contains("Parameters (1)"))
            #expect(first.contains("No problems found."))
            // A reload shows the same thing (now from what this node kept).
            #expect(try await Self.review(server, ana) == first)

            // Another node (its own store, the same database) rewrites Ana's draft with the same
            // save time: a second changed flag, and a value that is not a BOOLEAN.
            let otherNode = DraftStore(engine: server.application.store.engine)
            let summary = try #require(try await otherNode.drafts(Self.productionKey).first)
            var draft = try #require(try await otherNode.draft(Self.productionKey, userId: summary.userId))
            var template = draft.template
            for index in template.parameters.indices {
                switch template.parameters[index].key {
                case "banner_text": template.parameters[index].defaultValue = .value("Spring sale")
                case "payments_enabled": template.parameters[index].defaultValue = .value("maybe")
                default: break
                }
            }
            draft.template = template
            draft.changeCount = 2
            try await otherNode.save(draft)

            let second = try await Self.review(server, ana)
            #expect(second.contains("Spring sale"))
            #expect(!second.contains("Winter sale"))
            #expect(second.contains("Parameters (2)"))
            #expect(second.contains("is not a BOOLEAN"))
            #expect(!second.contains("No problems found."))

            // Someone publishes a third flag: the review now starts from version 2 and says so.
            let live = try await server.send(.get, "/v1/projects/demo/environments/production/template")
            var liveTemplate = try ConfigTemplate(json: .object(try #require(live.object)))
            let other = try #require(
                liveTemplate.parameters.firstIndex { $0.key != "banner_text" && $0.key != "payments_enabled" }
            )
            let otherKey = liveTemplate.parameters[other].key
            liveTemplate.parameters[other].description = "Changed by someone else"
            let published = try await server.send(
                .put,
                "/v1/projects/demo/environments/production/template",
                json: liveTemplate.json(),
                headers: [.ifMatch: "*"]
            )
            #expect(published.status == .ok, "\(published.text)")
            let third = try await Self.review(server, ana)
            #expect(third.contains("Published since you started: version 2"))
            #expect(third.contains(otherKey))
            #expect(third.contains("What changes against version 2"))
            #expect(third.contains("Spring sale"))
        }
    }

    @Test func anAnalysisIsOnlyForItsDraftBaseAndLiveVersion() {
        let cache = DraftAnalysisCache()
        let key = Self.productionKey
        var draft = Draft(
            environment: key,
            userId: "ana",
            baseVersion: 3,
            template: ConfigTemplate(),
            changeCount: 1,
            createTime: 0,
            updateTime: 0,
            revision: 7
        )
        let live = ConfigTemplate(parameters: [TemplateParameter(key: "a", defaultValue: .value("1"))])
        let diff = cache.diff(of: draft, live: live, liveVersion: 3)
        #expect(diff.removedParameters == ["a"])
        #expect(cache.analysis(of: draft, liveVersion: 3)?.diff == diff)
        #expect(cache.analysis(of: draft, liveVersion: 4) == nil)
        draft.revision = 8
        #expect(cache.analysis(of: draft, liveVersion: 3) == nil)
        draft.revision = 7
        draft.baseVersion = 2
        #expect(cache.analysis(of: draft, liveVersion: 3) == nil)
        draft.baseVersion = 3
        var other = draft
        other.userId = "ben"
        #expect(cache.analysis(of: other, liveVersion: 3) == nil)
    }
}
