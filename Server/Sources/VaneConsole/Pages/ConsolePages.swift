import Hummingbird
import VaneCore
import VaneServerCore

/// What every console controller has: the renderer, and the steps every page shares. The
/// controllers hold only the services they use; these protocols give them the shared steps
/// that need those services.
protocol ConsolePages: Sendable {
    var renderer: ConsolePageRenderer { get }
}

extension ConsolePages {
    /// A plain chrome with the main navigation.
    func chrome(
        _ title: String,
        user: UserAccount,
        section: String?,
        flash: ConsoleChrome.Flash? = nil
    )
        -> ConsoleChrome
    {
        ConsoleChrome(
            title: title,
            nav: ConsolePageRenderer.navigation(for: user, current: section),
            flash: flash
        )
    }

    /// `2026-11-23 09:41 UTC`: one format everywhere, in UTC like the audit log.
    static func displayTime(_ milliseconds: Int64) -> String {
        let iso = Clock.rfc3339(milliseconds: milliseconds)
        // 2026-11-23T09:41:05.123Z → 2026-11-23 09:41 UTC
        let date = iso.prefix(10)
        let time = iso.dropFirst(11).prefix(5)
        return "\(date) \(time) UTC"
    }

    /// A one-line rendering of a parameter value for tables, at most `limit` characters.
    static func shortValue(_ value: ParameterValue?, limit: Int = 80) -> String {
        guard let value else { return "(no value)" }
        switch value.kind {
        case .value(let text): return text.count > limit ? String(text.prefix(limit)) + "…" : text
        case .useInAppDefault: return "(in-app default)"
        case .managed(let kind): return "(\(kind))"
        }
    }
}

/// A controller whose pages read projects and environments.
protocol StoredPages: ConsolePages {
    var store: ConfigStore { get }
}

extension StoredPages {
    /// The environment in the path, checked to exist, with its project.
    func environment(
        _ context: VaneRequestContext
    ) async throws -> (EnvironmentKey, VaneServerCore.Project, VaneServerCore.Environment) {
        guard let projectId = context.parameters.get("project"),
            let environmentId = context.parameters.get("environment")
        else { throw ConsolePageError.notFound("the address names no environment") }
        guard let project = try await store.project(id: projectId) else {
            throw ConsolePageError.notFound("there is no project \"\(projectId)\"")
        }
        guard let environment = try await store.environment(projectId: projectId, id: environmentId) else {
            throw ConsolePageError.notFound("project \"\(projectId)\" has no environment \"\(environmentId)\"")
        }
        return (EnvironmentKey(projectId: projectId, environmentId: environmentId), project, environment)
    }

    /// The template of a version of an environment; version 0 is the empty template.
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

    /// The project's other environments the person may publish in: where a flag can be copied
    /// or a new flag added too.
    func otherEnvironments(
        of key: EnvironmentKey,
        principal: Principal
    ) async throws -> [VaneServerCore.Environment] {
        try await store.environments(projectId: key.projectId).filter {
            $0.id != key.environmentId
                && principal.permits(.publish(EnvironmentKey(projectId: key.projectId, environmentId: $0.id)))
        }
    }

    /// Every environment as `project/environment`, for choosers.
    func environmentNames() async throws -> [String] {
        var names: [String] = []
        for project in try await store.projects() {
            for environment in try await store.environments(projectId: project.id) {
                names.append("\(project.id)/\(environment.id)")
            }
        }
        return names
    }
}

/// A controller of an environment's pages, whose bar shows who has drafts of it.
protocol EnvironmentPages: StoredPages {
    var drafts: DraftStore { get }
}

extension EnvironmentPages {
    /// The chrome of an environment's pages: its tabs and who has drafts of it.
    func environmentChrome(
        title: String,
        user: UserAccount,
        project: VaneServerCore.Project,
        environment: VaneServerCore.Environment,
        tab: String
    ) async throws -> ConsoleChrome {
        let key = EnvironmentKey(projectId: project.id, environmentId: environment.id)
        let base = ConsolePaths.environment(key)
        let drafts = try await draftStatus(key, user: user)
        let review = drafts.hasDraft ? "Review (\(drafts.changes))" : "Review"
        let tabs = [
            ("flags", "Flags"), ("conditions", "Conditions"), ("evaluate", "Who gets what"), ("review", review),
            ("history", "History"), ("experiments", "Experiments"), ("rollouts", "Rollouts"),
            ("change-requests", "Change requests"),
        ].map {
            ConsoleChrome.NavItem(href: "\(base)/\($0.0)", label: $0.1, current: $0.0 == tab)
        }
        return ConsoleChrome(
            title: title,
            nav: ConsolePageRenderer.navigation(for: user, current: "/"),
            environment: ConsoleChrome.EnvironmentBar(
                projectName: project.name,
                environmentName: environment.name,
                version: environment.templateVersion,
                colour: environment.colour?.rawValue,
                tabs: tabs,
                drafts: drafts.hasDraft || drafts.others != nil ? drafts : nil
            )
        )
    }

    /// The environment bar's line about drafts: the person's own and everyone else's.
    func draftStatus(_ key: EnvironmentKey, user: UserAccount) async throws -> ConsoleChrome.DraftStatus {
        let all = try await drafts.drafts(key)
        let own = all.first { $0.userId == user.id }
        let others = all.filter { $0.userId != user.id }.map { summary in
            let name = summary.userName.isEmpty ? summary.email : summary.userName
            return
                "\(name) (\(summary.changeCount) change\(summary.changeCount == 1 ? "" : "s"), saved \(Self.displayTime(summary.updateTime)))"
        }
        return ConsoleChrome.DraftStatus(
            changes: own?.changeCount ?? 0,
            hasDraft: own != nil,
            reviewHref: ConsolePaths.environment(key) + "/review",
            others: others.isEmpty ? nil : others.joined(separator: ", ")
        )
    }
}
