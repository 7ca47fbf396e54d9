import Hummingbird
import VaneServerCore

/// The console's route groups, one per kind of person they admit: a controller registers each
/// route in the group of the role it needs, and the group's middleware checks it before any
/// handler runs.
struct ConsoleRouteGroups {
    /// Anyone: signing in and out.
    let signedOut: RouterGroup<VaneRequestContext>
    /// A signed-in person, even one who must choose a new password first: their account page.
    let account: RouterGroup<VaneRequestContext>
    /// A signed-in person (every role may read).
    let signedIn: RouterGroup<VaneRequestContext>
    /// A signed-in person, under `projects/:project/environments/:environment`.
    let environment: RouterGroup<VaneRequestContext>
    /// Under the same path, a person who may publish in that environment (an editor granted it,
    /// or an admin).
    let environmentEditor: RouterGroup<VaneRequestContext>
    /// An admin.
    let admin: RouterGroup<VaneRequestContext>

    /// The groups on `router`, all behind `console` (sessions, same-origin checks, error pages).
    init(router: Router<VaneRequestContext>, console: ConsoleMiddleware) {
        let all = router.group()
        all.add(middleware: console)
        signedOut = all
        account = all.group().add(middleware: ConsoleSignInMiddleware(allowsPasswordChange: true))
        signedIn = all.group().add(middleware: ConsoleSignInMiddleware())
        environment = signedIn.group("projects/:project/environments/:environment")
        environmentEditor = environment.group()
            .add(middleware: ConsoleRoleMiddleware(requirement: .editorOfEnvironment))
        admin = signedIn.group().add(middleware: ConsoleRoleMiddleware(requirement: .admin))
    }
}
