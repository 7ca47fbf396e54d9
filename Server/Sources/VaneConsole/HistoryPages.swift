import Hummingbird
import VaneAuthoring
import VaneCore
import VaneServerCore

/// An environment's versions, the diff between any two, and rolling back.
extension ConsoleRoutes {
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
            "history",
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

    /// The structured diff of two templates with each changed item's before and after.
    struct DiffView: Sendable {
        struct Item: Sendable {
            var name: String
            var kind: String
            var kindLabel: String
            var before: String
            var after: String
        }

        struct Section: Sendable {
            var title: String
            var items: [Item]
        }

        var empty: Bool
        var sections: [Section]

        init(from old: ConfigTemplate, to new: ConfigTemplate) {
            self.init(from: old, to: new, diff: TemplateDiff(from: old, to: new))
        }

        /// The view of a diff already computed between `old` and `new`.
        init(from old: ConfigTemplate, to new: ConfigTemplate, diff: TemplateDiff) {
            // Only the parameters the diff names, found in one walk over each template.
            let named = Set(diff.addedParameters + diff.changedParameters + diff.removedParameters)
            let oldParameters = old.parameters(forKeys: named)
            let newParameters = new.parameters(forKeys: named)
            func parameterText(_ before: Bool, _ key: String) -> String {
                let parameters = before ? oldParameters : newParameters
                return parameters[key].map { JSONValue.object($0.json()).serialized(.pretty) } ?? "—"
            }
            func conditionText(_ before: Bool, _ name: String) -> String {
                let template = before ? old : new
                guard let index = template.conditions.firstIndex(where: { $0.name == name }) else { return "—" }
                let condition = template.conditions[index]
                var object = condition.json()
                object["position"] = .number(JSONNumber(Double(index + 1)))
                return JSONValue.object(object).serialized(.pretty)
            }
            func items(
                _ lists: [(String, String, [String])],
                text: (Bool, String) -> String
            ) -> [Item] {
                lists.flatMap { kind, label, names in
                    names.map {
                        Item(name: $0, kind: kind, kindLabel: label, before: text(true, $0), after: text(false, $0))
                    }
                }
            }
            let parameters = items(
                [
                    ("added", "added", diff.addedParameters), ("changed", "changed", diff.changedParameters),
                    ("removed", "removed", diff.removedParameters),
                ],
                text: parameterText
            )
            let conditions = items(
                [
                    ("added", "added", diff.addedConditions), ("changed", "changed", diff.changedConditions),
                    ("removed", "removed", diff.removedConditions),
                ],
                text: conditionText
            )
            empty = diff.isEmpty
            sections = [
                Section(title: "Parameters (\(parameters.count))", items: parameters),
                Section(title: "Conditions (\(conditions.count))", items: conditions),
            ].filter { !$0.items.isEmpty }
        }
    }

    struct DiffPage: Sendable {
        var from: Int64
        var to: Int64
        var diff: DiffView
        var back: String
    }

    func template(_ key: EnvironmentKey, number: Int64) async throws -> ConfigTemplate {
        if number == 0 { return ConfigTemplate() }
        guard
            let stored = try await store.version(
                projectId: key.projectId,
                environmentId: key.environmentId,
                number: number
            )
        else { throw ConsolePageError.notFound("\(key) has no version \(number) (it may have been pruned)") }
        return stored.template
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
            "diff",
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
        var target: Int64
        var current: Int64
        var nextVersion: Int64
        var environment: String
        var diff: DiffView
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
        let page = RollbackPage(
            target: target,
            current: current,
            nextVersion: current + 1,
            environment: "\(key)",
            diff: DiffView(from: try await template(key, number: current), to: try await template(key, number: target)),
            action: "\(base)/rollback",
            back: "\(base)/history",
            csrf: session.csrfToken
        )
        return renderer.render(
            "rollback",
            chrome: try await environmentChrome(
                title: "Roll back",
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
        do {
            try await publisher.rollback(key, to: target, expectedVersion: seen, actor: principal.actor)
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
