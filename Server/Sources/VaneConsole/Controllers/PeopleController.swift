import Foundation
import Hummingbird
import VaneServerCore

/// People: list, add (with a one-time password), change role and environments, reset password,
/// disable. Admins only.
struct PeopleController: StoredPages {
    let store: ConfigStore
    let accounts: Accounts
    let renderer: ConsolePageRenderer

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.admin.get("users", use: usersPage)
        routes.admin.post("users", use: createUser)
        routes.admin.get("users/:id", use: userPage)
        routes.admin.post("users/:id", use: updateUser)
        routes.admin.post("users/:id/password", use: resetPassword)
        routes.admin.post("users/:id/disable", use: disableUser)
        routes.admin.post("users/:id/enable", use: enableUser)
    }

    struct UsersPage: Sendable {
        struct Created: Sendable {
            var email: String
            var password: String
        }

        struct Row: Sendable {
            var id: String
            var email: String
            var name: String
            var role: String
            var environments: String
            var disabled: Bool
            var mustChange: Bool
        }

        var created: Created?
        var error: String?
        var grants: [GrantOption]
        var csrf: String
        var users: [Row]
    }

    /// One environment an editor may be granted, as a checkbox: every environment (`*`), every
    /// environment of a project (`project/*`), or one.
    struct GrantOption: Sendable {
        var id: String
        var name: String
        var label: String
        var checked: Bool
    }

    /// Every grant there is to choose, those in `chosen` checked.
    func grantOptions(chosen: Set<String>) async throws -> [GrantOption] {
        func option(_ value: String, _ label: String) -> GrantOption {
            // Ids are [a-z0-9-]: `/` and `*` become `_` and `all`, so no two grants share an id.
            let id =
                "grant-" + value.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "*", with: "all")
            return GrantOption(id: id, name: Self.grantPrefix + value, label: label, checked: chosen.contains(value))
        }
        var options = [option("*", "Every environment")]
        for project in try await store.projects() {
            options.append(option("\(project.id)/*", "Every environment of \(project.name)"))
            for environment in try await store.environments(projectId: project.id) {
                options.append(option("\(project.id)/\(environment.id)", "\(project.name) › \(environment.name)"))
            }
        }
        return options
    }

    /// The checkboxes' names: `grant:` and the grant (`grant:demo/staging`).
    static let grantPrefix = "grant:"

    /// The grants a form chose: its checkboxes, and a typed `environments` list (the API's words).
    static func grants(_ form: ConsoleForm) throws(AccountError) -> [EnvironmentGrant] {
        let checked = form.fields.keys.filter { $0.hasPrefix(grantPrefix) }.sorted().map {
            $0.dropFirst(grantPrefix.count)
        }
        return try Accounts.grants(
            ([form.text("environments") ?? ""] + checked.map(String.init)).joined(separator: ",")
        )
    }

    static func grantsText(_ user: UserAccount) -> String {
        switch user.role {
        case .admin: "all (admin)"
        case .viewer: "none (viewer)"
        case .editor: user.environments.isEmpty ? "none" : user.environments.map(\.description).joined(separator: ", ")
        }
    }

    func renderUsers(
        _ context: VaneRequestContext,
        user: UserAccount,
        session: UserSession,
        created: UsersPage.Created? = nil,
        error: String? = nil,
        flash: ConsoleChrome.Flash? = nil
    ) async throws -> Response {
        let rows = try await accounts.store.users().map {
            UsersPage.Row(
                id: $0.id,
                email: $0.email,
                name: $0.name,
                role: $0.role.rawValue,
                environments: Self.grantsText($0),
                disabled: $0.disableTime != nil,
                mustChange: $0.mustChangePassword
            )
        }
        return renderer.render(
            .users,
            chrome: chrome("People", user: user, section: "/users", flash: flash),
            page: UsersPage(
                created: created,
                error: error,
                grants: try await grantOptions(chosen: []),
                csrf: session.csrfToken,
                users: rows
            ),
            context: context,
            status: error == nil ? .ok : .badRequest
        )
    }

    @Sendable func usersPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        return try await renderUsers(context, user: user, session: session)
    }

    @Sendable func createUser(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        do {
            guard let role = form.text("role").flatMap(UserRole.init(rawValue:)) else {
                throw AccountError.invalid("choose viewer, editor or admin")
            }
            let (created, password) = try await accounts.create(
                email: form.text("email") ?? "",
                name: form.text("name"),
                role: role,
                environments: try Self.grants(form),
                actor: principal.actor
            )
            return try await renderUsers(
                context,
                user: user,
                session: session,
                created: UsersPage.Created(email: created.email, password: password)
            )
        } catch let error as AccountError {
            return try await renderUsers(context, user: user, session: session, error: error.message)
        } catch let error as StorageError where error != .busy {
            return try await renderUsers(context, user: user, session: session, error: error.description)
        }
    }

    struct UserPage: Sendable {
        struct Role: Sendable {
            var value: String
            var selected: Bool
        }

        var id: String
        var email: String
        var roles: [Role]
        var grants: [GrantOption]
        var disabled: Bool
        var `self`: Bool
        var csrf: String
        var error: String?
    }

    func renderUser(
        _ context: VaneRequestContext,
        user: UserAccount,
        session: UserSession,
        id: String,
        error: String? = nil,
        flash: ConsoleChrome.Flash? = nil
    ) async throws -> Response {
        guard let (account, _) = try await accounts.store.user(id: id) else {
            throw ConsolePageError.notFound("there is no person with id \"\(id.prefix(40))\"")
        }
        return renderer.render(
            .user,
            chrome: chrome(account.email, user: user, section: "/users", flash: flash),
            page: UserPage(
                id: account.id,
                email: account.email,
                roles: UserRole.allCases.map { UserPage.Role(value: $0.rawValue, selected: $0 == account.role) },
                grants: try await grantOptions(chosen: Set(account.environments.map(\.description))),
                disabled: account.disableTime != nil,
                self: account.id == user.id,
                csrf: session.csrfToken,
                error: error
            ),
            context: context,
            status: error == nil ? .ok : .badRequest
        )
    }

    @Sendable func userPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        return try await renderUser(context, user: user, session: session, id: context.parameters.get("id") ?? "")
    }

    @Sendable func updateUser(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let id = context.parameters.get("id") ?? ""
        do {
            guard let role = form.text("role").flatMap(UserRole.init(rawValue:)) else {
                throw AccountError.invalid("choose viewer, editor or admin")
            }
            if id == user.id, role != .admin {
                throw AccountError.invalid("you cannot take away your own admin role; ask another admin")
            }
            try await accounts.store.updateUser(
                id: id,
                role: role,
                environments: try Self.grants(form),
                actor: principal.actor
            )
        } catch let error as AccountError {
            return try await renderUser(context, user: user, session: session, id: id, error: error.message)
        }
        return try await renderUser(context, user: user, session: session, id: id, flash: .ok("Saved."))
    }

    @Sendable func resetPassword(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let id = context.parameters.get("id") ?? ""
        guard let (account, _) = try await accounts.store.user(id: id) else {
            throw ConsolePageError.notFound("there is no person with id \"\(id.prefix(40))\"")
        }
        let password = try await accounts.resetPassword(userId: id, actor: principal.actor)
        return try await renderUsers(
            context,
            user: user,
            session: session,
            created: UsersPage.Created(email: account.email, password: password)
        )
    }

    @Sendable func disableUser(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await setDisabled(true, request, context)
    }

    @Sendable func enableUser(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await setDisabled(false, request, context)
    }

    func setDisabled(_ disabled: Bool, _ request: Request, _ context: VaneRequestContext) async throws -> Response {
        let (user, session, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let id = context.parameters.get("id") ?? ""
        guard id != user.id else {
            return try await renderUser(
                context,
                user: user,
                session: session,
                id: id,
                error: "you cannot disable your own account"
            )
        }
        try await accounts.store.updateUser(id: id, disabled: disabled, actor: principal.actor)
        return try await renderUser(
            context,
            user: user,
            session: session,
            id: id,
            flash: .ok(disabled ? "Disabled; their sessions have ended." : "Enabled.")
        )
    }
}
