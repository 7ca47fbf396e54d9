import Hummingbird
import VaneCore
import VaneServerCore

/// The home page: every project, its environments and what is live in each.
struct ProjectsController: StoredPages {
    let store: ConfigStore
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.signedIn.get("/", use: projects)
        routes.environment.get("/", use: environmentHome)
    }

    struct ProjectsPage: Sendable {
        struct Row: Sendable {
            var id: String
            var name: String
            var href: String
            var version: Int64?
            var publishedBy: String
            var publishedAt: String?
            var publishedAtISO: String
        }

        struct Project: Sendable {
            var id: String
            var name: String
            var environments: [Row]
            /// The project's webhooks page, for admins.
            var webhooksHref: String?
        }

        var projects: [Project]
    }

    @Sendable func projects(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, _, _) = try context.signedIn()
        var projects: [ProjectsPage.Project] = []
        for project in try await store.projects() {
            var rows: [ProjectsPage.Row] = []
            for environment in try await store.environments(projectId: project.id) {
                let key = EnvironmentKey(projectId: project.id, environmentId: environment.id)
                var query = VersionQuery()
                query.pageSize = 1
                let newest = try await store.versions(
                    projectId: project.id,
                    environmentId: environment.id,
                    query: query
                ).items.first
                let time = newest?.updateTime.flatMap { Clock.milliseconds(rfc3339: $0) }
                rows.append(
                    ProjectsPage.Row(
                        id: environment.id,
                        name: environment.name,
                        href: ConsolePaths.environment(key) + "/flags",
                        version: environment.templateVersion > 0 ? environment.templateVersion : nil,
                        publishedBy: newest?.updateUser?.name ?? "",
                        publishedAt: time.map(Self.displayTime),
                        publishedAtISO: newest?.updateTime ?? ""
                    )
                )
            }
            projects.append(
                ProjectsPage.Project(
                    id: project.id,
                    name: project.name,
                    environments: rows,
                    webhooksHref: user.role == .admin ? "/projects/\(ConsolePaths.encode(project.id))/webhooks" : nil
                )
            )
        }
        return renderer.render(
            .projects,
            chrome: chrome("Projects", user: user, section: "/"),
            page: ProjectsPage(projects: projects),
            context: context
        )
    }

    @Sendable func environmentHome(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (key, _, _) = try await environment(context)
        throw ConsoleRedirect(location: ConsolePaths.environment(key) + "/flags")
    }
}
