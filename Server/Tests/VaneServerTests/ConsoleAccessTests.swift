import Foundation
import HTTPTypes
import Hummingbird
import Testing
import VaneServerCore

@testable import VaneConsole
@testable import VaneServer

/// Sign-in and roles are checked by middleware around route groups, not by each handler: these
/// walk every route the console registers, so a route added outside the groups fails here.
@Suite(.timeLimit(.minutes(5))) struct ConsoleAccessTests {
    /// The routes anyone may use: signing in and out, and the static files.
    static let publicRoutes: Set<String> = ["GET /sign-in", "POST /sign-in", "POST /sign-out", "GET /assets/{file}"]

    /// The forms a viewer may send: their own account, and the conditions editor's live checks,
    /// which only read.
    static let viewerForms: Set<String> = [
        "POST /sign-in", "POST /sign-out", "POST /account/password", "POST /account/sign-out-everywhere",
        "POST /projects/{project}/environments/{environment}/conditions/check",
        "POST /projects/{project}/environments/{environment}/conditions/build",
    ]

    /// The console over a running server's services, with a renderer of the test's own.
    static func console(of application: VaneServerApplication, renderer: ConsolePageRenderer) -> ConsoleRoutes {
        ConsoleRoutes(
            store: application.store,
            accounts: application.accounts,
            drafts: DraftStore(engine: application.store.engine),
            keys: application.keys,
            streamHub: application.streamHub,
            publisher: application.publisher,
            experiments: application.experiments,
            experimentLifecycle: application.experimentLifecycle,
            rolloutLifecycle: application.rolloutLifecycle,
            webhookDestination: application.webhookDestination,
            renderer: renderer,
            secureCookies: false
        )
    }

    /// Every route the console registers, as `METHOD /path` with `{parameter}` captures.
    static func consoleRoutes(_ server: TestServer) -> [(method: HTTPRequest.Method, path: String)] {
        let router = Router(context: VaneRequestContext.self)
        console(of: server.application, renderer: ConsolePageRenderer(assets: server.application.consoleAssets))
            .register(on: router)
        return router.routes.map { (method: $0.method, path: $0.path.description) }
    }

    /// A concrete address for a route: the demo environment, `x` for every other capture.
    static func address(_ path: String) -> String {
        path.replacingOccurrences(of: "{project}", with: "demo")
            .replacingOccurrences(of: "{environment}", with: "production")
            .replacingOccurrences(of: #"\{[a-z]+\}"#, with: "x", options: .regularExpression)
    }

    @Test(arguments: TestDatabase.allCases)
    func everyRouteButSignInAndAssetsSendsAStrangerToSignIn(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let routes = Self.consoleRoutes(server)
            #expect(routes.count > 40, "the console registers its routes")
            for route in routes where !Self.publicRoutes.contains("\(route.method) \(route.path)") {
                let address = Self.address(route.path)
                let form: [String: String]? = route.method == .post ? ["_csrf": "x"] : nil
                let reply = try await ConsoleTests.request(server, route.method, address, form: form)
                #expect(reply.status == .seeOther, "\(route.method) \(route.path)")
                #expect(
                    reply.headers[.location] == "/sign-in?next=" + ConsolePaths.encodeQueryValue(address),
                    "\(route.method) \(route.path) must sit behind ConsoleSignInMiddleware"
                )
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aViewerIsRefusedEveryFormThatChangesSomething(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let posts = Self.consoleRoutes(server).filter {
                $0.method == .post && !Self.viewerForms.contains("POST \($0.path)")
            }
            #expect(posts.count > 20, "the console registers its forms")
            for route in posts {
                let reply = try await ConsoleTests.request(
                    server,
                    .post,
                    Self.address(route.path),
                    form: ["_csrf": viewer.csrf, "message": "a viewer tries", "name": "x"],
                    cookie: viewer.cookie
                )
                #expect(reply.status == .forbidden, "POST \(route.path)")
                #expect(reply.text.contains("Not allowed"), "POST \(route.path)")
            }
            // What the middleware refused was never done.
            let audit = try await server.send(.get, "/v1/audit", key: TestServer.adminKey)
            #expect(!audit.text.contains("a viewer tries"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anEditorIsRefusedOutsideTheirEnvironmentsAndAdminPages(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            for path in ["/projects/demo/environments/production/rollback", "/keys", "/users"] {
                let reply = try await ConsoleTests.request(server, .get, path, cookie: editor.cookie)
                #expect(reply.status == .forbidden, "\(path)")
            }
            let own = try await ConsoleTests.request(
                server,
                .get,
                "/projects/demo/environments/staging/flags/new",
                cookie: editor.cookie
            )
            #expect(own.status == .ok)
        }
    }
}
