import Foundation
import HTTPTypes
package import Hummingbird
import NIOCore
import VaneCore
package import VaneServerCore

/// The web console, served at `/` beside the API: server-rendered pages and plain forms, with a
/// little script for conveniences. Every change a person makes goes through the same
/// ``Principal/require(_:)`` and the same store and publisher as the API, so the audit log
/// names the person and the console can do nothing the API would refuse.
package struct ConsoleRoutes {
    let store: ConfigStore
    let accounts: Accounts
    let drafts: DraftStore
    let keys: KeyIndex
    let streamHub: StreamHub
    let publisher: TemplatePublisher
    let experiments: ExperimentStore
    let experimentLifecycle: ExperimentLifecycle
    let renderer: ConsolePageRenderer
    /// Whether session cookies get `Secure` (the server terminates TLS itself).
    let secureCookies: Bool
    /// What drafts change, worked out once per draft and live version.
    let analyses = DraftAnalysisCache()

    var assets: ConsoleAssets { renderer.assets }
    /// The kill switch, as the API throws it.
    var switching: FlagSwitching { FlagSwitching(store: store, publisher: publisher) }

    package init(
        store: ConfigStore,
        accounts: Accounts,
        drafts: DraftStore,
        keys: KeyIndex,
        streamHub: StreamHub,
        publisher: TemplatePublisher,
        experiments: ExperimentStore,
        experimentLifecycle: ExperimentLifecycle,
        renderer: ConsolePageRenderer,
        secureCookies: Bool
    ) {
        self.store = store
        self.accounts = accounts
        self.drafts = drafts
        self.keys = keys
        self.streamHub = streamHub
        self.publisher = publisher
        self.experiments = experiments
        self.experimentLifecycle = experimentLifecycle
        self.renderer = renderer
        self.secureCookies = secureCookies
    }

    package func register(on router: Router<VaneRequestContext>) {
        // Static files: public, immutable under their content-hashed names.
        router.get("assets/:file", use: asset)
        let console = router.group()
        console.add(middleware: ConsoleMiddleware(accounts: accounts, renderer: renderer))
        // The only routes for people who are not signed in.
        console.get("sign-in", use: signInPage)
        console.post("sign-in", use: signIn)
        console.post("sign-out", use: signOut)
        // A person who must choose a new password may use their account page only.
        let account = console.group().add(middleware: ConsoleSignInMiddleware(allowsPasswordChange: true))
        account.get("account", use: accountPage)
        account.post("account/password", use: changePassword)
        account.post("account/sign-out-everywhere", use: signOutEverywhere)
        // Everything else: viewers and up …
        let signedIn = console.group().add(middleware: ConsoleSignInMiddleware())
        signedIn.get("/", use: projects)
        signedIn.get("audit", use: audit)
        let environment = signedIn.group("projects/:project/environments/:environment")
        // … editors of the environment in the path …
        let editor = environment.group().add(middleware: ConsoleRoleMiddleware(requirement: .editorOfEnvironment))
        environment.get("/", use: environmentHome)
        environment.get("flags", use: flags)
        editor.get("flags/:key/switch", use: switchPage)
        editor.post("flags/:key/switch", use: switchFlag)
        environment.get("history", use: history)
        environment.get("experiments", use: experimentsPage)
        environment.get("experiments/:experiment", use: experimentPage)
        editor.post("experiments/:experiment/start", use: startExperiment)
        editor.post("experiments/:experiment/stop", use: stopExperiment)
        environment.get("diff", use: diffPage)
        editor.get("rollback", use: rollbackPage)
        editor.post("rollback", use: rollback)
        registerReviewPages(viewer: environment, editor: editor)
        registerFlagEditor(viewer: environment, editor: editor)
        registerConditionPages(viewer: environment, editor: editor)
        registerEvaluatePages(viewer: environment, editor: editor)
        // … and admins.
        let admin = signedIn.group().add(middleware: ConsoleRoleMiddleware(requirement: .admin))
        admin.get("keys", use: keysPage)
        admin.post("keys", use: createKey)
        admin.post("keys/:id/revoke", use: revokeKey)
        admin.get("users", use: usersPage)
        admin.post("users", use: createUser)
        admin.get("users/:id", use: userPage)
        admin.post("users/:id", use: updateUser)
        admin.post("users/:id/password", use: resetPassword)
        admin.post("users/:id/disable", use: disableUser)
        admin.post("users/:id/enable", use: enableUser)
    }

    @Sendable func asset(_ request: Request, context: VaneRequestContext) async throws -> Response {
        guard let name = context.parameters.get("file"), let file = assets.files[name] else {
            return Response(status: .notFound)
        }
        var headers = HTTPFields()
        headers[.contentType] = file.contentType
        headers[.cacheControl] = "public, max-age=31536000, immutable"
        headers[.xContentTypeOptions] = "nosniff"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.body))
    }

    // MARK: Shared steps

    /// The environment in the path, checked to exist, with its project.
    func environment(
        _ context: VaneRequestContext
    ) async throws -> (EnvironmentKey, Project, VaneServerCore.Environment) {
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

    /// The chrome of an environment's pages: its tabs and who has drafts of it.
    func environmentChrome(
        title: String,
        user: UserAccount,
        project: Project,
        environment: VaneServerCore.Environment,
        tab: String
    ) async throws -> ConsoleChrome {
        let key = EnvironmentKey(projectId: project.id, environmentId: environment.id)
        let base = ConsolePaths.environment(key)
        let drafts = try await draftStatus(key, user: user)
        let review = drafts.hasDraft ? "Review (\(drafts.changes))" : "Review"
        let tabs = [
            ("flags", "Flags"), ("conditions", "Conditions"), ("evaluate", "Who gets what"), ("review", review),
            ("history", "History"), ("experiments", "Experiments"),
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
                tabs: tabs,
                drafts: drafts.hasDraft || drafts.others != nil ? drafts : nil
            )
        )
    }

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
