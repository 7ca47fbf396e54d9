import Hummingbird
import VaneServerCore

/// API keys: list, create (the secret shown once), revoke. Admins only.
struct KeysController: StoredPages {
    let store: ConfigStore
    let keys: KeyIndex
    let streamHub: StreamHub
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.admin.get("keys", use: keysPage)
        routes.admin.post("keys", use: createKey)
        routes.admin.post("keys/:id/revoke", use: revokeKey)
    }

    struct KeysPage: Sendable {
        struct Created: Sendable {
            var name: String
            var secret: String
        }

        struct Option: Sendable {
            var value: String
            var label: String
        }

        struct Row: Sendable {
            var id: String
            var name: String
            var role: String
            var scope: String
            var created: String
            var revoked: String?
            var csrf: String
        }

        var created: Created?
        var error: String?
        var csrf: String
        var environments: [Option]
        var keys: [Row]
    }

    var keyAdministration: KeyAdministration {
        KeyAdministration(store: store, keys: keys, streamHub: streamHub)
    }

    func renderKeys(
        _ context: VaneRequestContext,
        user: UserAccount,
        session: UserSession,
        created: KeysPage.Created? = nil,
        error: String? = nil,
        flash: ConsoleChrome.Flash? = nil
    ) async throws -> Response {
        var options = [KeysPage.Option(value: "", label: "every project (admin keys)")]
        options += try await environmentNames().map { KeysPage.Option(value: $0, label: $0) }
        let rows = try await store.keys().map { key in
            KeysPage.Row(
                id: key.id,
                name: key.name,
                role: key.role.rawValue,
                scope: key.projectId.map { "\($0)/\(key.environmentId ?? "")" } ?? "every project",
                created: Self.displayTime(key.createTime),
                revoked: key.revokeTime.map(Self.displayTime),
                csrf: session.csrfToken
            )
        }
        return renderer.render(
            .keys,
            chrome: chrome("API keys", user: user, section: "/keys", flash: flash),
            page: KeysPage(created: created, error: error, csrf: session.csrfToken, environments: options, keys: rows),
            context: context,
            status: error == nil ? .ok : .badRequest
        )
    }

    @Sendable func keysPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        return try await renderKeys(context, user: user, session: session)
    }

    @Sendable func createKey(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        guard let name = form.text("name") else {
            return try await renderKeys(context, user: user, session: session, error: "a key needs a name")
        }
        guard let role = form.text("role").flatMap(KeyRole.init(rawValue:)) else {
            return try await renderKeys(context, user: user, session: session, error: "choose admin, server or client")
        }
        let scope = form.text("environment")?.split(separator: "/", maxSplits: 1).map { String($0) }
        do {
            let (_, secret) = try await keyAdministration.create(
                name: name,
                role: role,
                projectId: scope?.first,
                environmentId: scope.flatMap { $0.count == 2 ? $0[1] : nil },
                actor: principal.actor
            )
            return try await renderKeys(
                context,
                user: user,
                session: session,
                created: KeysPage.Created(name: name, secret: secret)
            )
        } catch let refusal as KeyAdministration.Refusal {
            return try await renderKeys(context, user: user, session: session, error: refusal.message)
        } catch let error as StorageError where error != .busy {
            return try await renderKeys(context, user: user, session: session, error: error.description)
        }
    }

    @Sendable func revokeKey(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let id = context.parameters.get("id") ?? ""
        try await keyAdministration.revoke(id: id, actor: principal.actor)
        return try await renderKeys(context, user: user, session: session, flash: .ok("Revoked the key \(id)."))
    }
}
