import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// An environment's versions, the diff between any two, and rolling back.
struct HistoryController: EnvironmentPages {
    let store: ConfigStore
    let drafts: DraftStore
    let publisher: TemplatePublisher
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.signedIn.get("audit", use: audit)
        routes.environment.get("history", use: history)
        routes.environment.get("diff", use: diffPage)
        routes.environmentEditor.get("rollback", use: rollbackPage)
        routes.environmentEditor.post("rollback", use: rollback)
    }

    struct HistoryPage: Sendable {
        struct Row: Sendable {
            var number: String
            var live: Bool
            var time: String
            var timeISO: String
            var user: String
            var message: String
            var rollbackSource: String?
            var diffHref: String?
            var rollbackHref: String?
        }

        var versions: [Row]
        var compareAction: String
        var compareFrom: Int64
        var compareTo: Int64
        var olderHref: String?
    }

    @Sendable func history(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, principal) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        var query = VersionQuery()
        query.pageSize = 50
        if let token = request.uri.queryParameters.get("before"), let number = Int64(token), number > 1 {
            query.pageToken = String(number)
        }
        let page = try await store.versions(projectId: key.projectId, environmentId: key.environmentId, query: query)
        let base = ConsolePaths.environment(key)
        let current = environment.templateVersion
        let canPublish = principal.permits(.publish(key))
        let rows = page.items.map { version -> HistoryPage.Row in
            let number = Int64(version.versionNumber ?? "") ?? 0
            let time = version.updateTime.flatMap { Clock.milliseconds(rfc3339: $0) }
            return HistoryPage.Row(
                number: version.versionNumber ?? "?",
                live: number == current,
                time: time.map(Self.displayTime) ?? "",
                timeISO: version.updateTime ?? "",
                user: version.updateUser?.name ?? "",
                message: version.description ?? "",
                rollbackSource: version.rollbackSource,
                diffHref: "\(base)/diff?from=\(number - 1)&to=\(number)",
                rollbackHref: canPublish && number < current ? "\(base)/rollback?version=\(number)" : nil
            )
        }
        return renderer.render(
            .history,
            chrome: try await environmentChrome(
                title: "History",
                user: user,
                project: project,
                environment: environment,
                tab: "history"
            ),
            page: HistoryPage(
                versions: rows,
                compareAction: "\(base)/diff",
                compareFrom: max(current - 1, 0),
                compareTo: current,
                olderHref: page.nextPageToken.map { "\(base)/history?before=\($0)" }
            ),
            context: context
        )
    }

    struct DiffPage: Sendable {
        var from: Int64
        var to: Int64
        var diff: DiffView
        var back: String
    }

    @Sendable func diffPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        guard let from = request.uri.queryParameters.get("from").flatMap({ Int64($0) }), from >= 0,
            let to = request.uri.queryParameters.get("to").flatMap({ Int64($0) }), to >= 0
        else { throw ConsolePageError.badRequest("compare needs two version numbers, from and to (0 is empty)") }
        let page = DiffPage(
            from: from,
            to: to,
            diff: DiffView(from: try await template(key, number: from), to: try await template(key, number: to)),
            back: ConsolePaths.environment(key) + "/history"
        )
        return renderer.render(
            .diff,
            chrome: try await environmentChrome(
                title: "Diff",
                user: user,
                project: project,
                environment: environment,
                tab: "history"
            ),
            page: page,
            context: context
        )
    }

    struct RollbackPage: Sendable {
        /// A flag the rollback would change, with the page that restores only it.
        struct FlagLink: Sendable {
            var key: String
            var href: String
        }

        var target: Int64
        var current: Int64
        var nextVersion: Int64
        var environment: String
        /// The one flag restored, or nil for the whole template.
        var flag: String?
        var diff: DiffView
        var flagLinks: [FlagLink]
        var hasFlagLinks: Bool
        var wholeHref: String
        var action: String
        var back: String
        var csrf: String
    }

    @Sendable func rollbackPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let (key, project, environment) = try await self.environment(context)
        let current = environment.templateVersion
        guard let target = request.uri.queryParameters.get("version").flatMap({ Int64($0) }), target >= 1,
            target < current
        else { throw ConsolePageError.badRequest("choose a version before the live one (\(current)) to roll back to") }
        let base = ConsolePaths.environment(key)
        let flag = request.uri.queryParameters.get("flag").map { String($0) }
        let live = try await template(key, number: current)
        let old = try await template(key, number: target)
        let result: ConfigTemplate
        if let flag {
            do throws(PublishError) {
                result = try TemplatePublisher.restoring(flag, from: old, version: target, onto: live)
            } catch {
                throw ConsolePageError.badRequest(ConsolePublishing.message(error))
            }
        } else {
            result = old
        }
        let whole = TemplateDiff(from: live, to: old)
        let keys = flag == nil ? whole.changedParameters + whole.addedParameters + whole.removedParameters : []
        let links = keys.map {
            RollbackPage.FlagLink(
                key: $0,
                href: "\(base)/rollback?version=\(target)&flag=\(ConsolePaths.encodeQueryValue($0))"
            )
        }
        let page = RollbackPage(
            target: target,
            current: current,
            nextVersion: current + 1,
            environment: "\(key)",
            flag: flag,
            diff: DiffView(from: live, to: result),
            flagLinks: links,
            hasFlagLinks: !links.isEmpty,
            wholeHref: "\(base)/rollback?version=\(target)",
            action: "\(base)/rollback",
            back: "\(base)/history",
            csrf: session.csrfToken
        )
        return renderer.render(
            .rollback,
            chrome: try await environmentChrome(
                title: flag.map { "Roll back \($0)" } ?? "Roll back",
                user: user,
                project: project,
                environment: environment,
                tab: "history"
            ),
            page: page,
            context: context
        )
    }

    @Sendable func rollback(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await self.environment(context)
        guard let target = form.text("version").flatMap(Int64.init), let seen = form.text("current").flatMap(Int64.init)
        else { throw ConsolePageError.badRequest("the form names no version to roll back to") }
        let reason = try form.required("reason", label: "The reason for the rollback")
        let flag = form.text("flag")
        do {
            try await publisher.rollback(
                key,
                to: target,
                expectedVersion: seen,
                actor: principal.actor,
                reason: reason,
                flag: flag
            )
        } catch let error as PublishError {
            if case .storage(.versionConflict) = error {
                throw ConsolePageError(
                    status: .conflict,
                    heading: "Someone published in between",
                    message:
                        "The live version is no longer \(seen). Open the history again to see what changed, then roll back from there."
                )
            }
            throw ConsolePageError.badRequest(ConsolePublishing.message(error))
        }
        throw ConsoleRedirect(location: ConsolePaths.environment(key) + "/history")
    }
}
