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
        routes.admin.post("projects/:project/environments/:environment/colour", use: setColour)
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
            var colour: String?
            var colourFieldId: String
            /// For admins: the colour form's action and choices.
            var colourAction: String?
            var colourOptions: [SelectOption]
        }

        struct Project: Sendable {
            var id: String
            var name: String
            var environments: [Row]
            /// The project's webhooks page, for admins.
            var webhooksHref: String?
        }

        var projects: [Project]
        var csrf: String
    }

    @Sendable func projects(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
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
                        publishedAtISO: newest?.updateTime ?? "",
                        colour: environment.colour?.rawValue,
                        colourFieldId: "colour-\(project.id)-\(environment.id)",
                        colourAction: user.role == .admin ? ConsolePaths.environment(key) + "/colour" : nil,
                        colourOptions: [SelectOption(value: "", label: "None", selected: environment.colour == nil)]
                            + EnvironmentColour.allCases.map {
                                SelectOption(
                                    value: $0.rawValue,
                                    label: $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst(),
                                    selected: $0 == environment.colour
                                )
                            }
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
            page: ProjectsPage(projects: projects, csrf: session.csrfToken),
            context: context
        )
    }

    /// Sets or clears an environment's colour (admins).
    @Sendable func setColour(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let (key, _, _) = try await environment(context)
        let name = form.text("colour") ?? ""
        let colour: EnvironmentColour?
        do {
            colour = name.isEmpty ? nil : try EnvironmentColour(name: name)
        } catch {
            throw ConsolePageError.badRequest(error.description)
        }
        try principal.require(.administer)
        _ = try await store.setEnvironmentColour(key, to: colour, actor: principal.actor)
        throw ConsoleRedirect(location: "/")
    }

    @Sendable func environmentHome(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (key, _, _) = try await environment(context)
        throw ConsoleRedirect(location: ConsolePaths.environment(key) + "/flags")
    }
}
