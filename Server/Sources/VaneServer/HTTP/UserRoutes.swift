import Hummingbird
import VaneCore
import VaneServerCore

/// The console's people through the API (admin keys): what `vane users` uses.
struct UserRoutes {
    let accounts: Accounts

    func register(on router: Router<VaneRequestContext>) {
        let v1 = router.group("v1")
        v1.get("users", use: list)
        v1.post("users", use: create)
        v1.patch("users/:id", use: update)
        v1.post("users/:id/password", use: resetPassword)
    }

    static func json(_ user: UserAccount) -> JSONValue {
        var object: JSONObject = [
            "id": .string(user.id), "email": .string(user.email), "name": .string(user.name),
            "role": .string(user.role.rawValue),
            "environments": .array(user.environments.map { .string($0.description) }),
            "mustChangePassword": .bool(user.mustChangePassword),
            "createTime": .string(Clock.rfc3339(milliseconds: user.createTime)),
        ]
        if let disabled = user.disableTime { object["disableTime"] = .string(Clock.rfc3339(milliseconds: disabled)) }
        return .object(object)
    }

    static func role(_ text: String) throws(APIError) -> UserRole {
        guard let role = UserRole(rawValue: text) else {
            throw APIError.invalidArgument("role must be viewer, editor or admin, found \"\(text.prefix(40))\"")
        }
        return role
    }

    static func grants(_ value: JSONValue?) throws(APIError) -> [EnvironmentGrant]? {
        guard let value, value != .null else { return nil }
        guard case .array(let items) = value else {
            throw APIError.invalidArgument("\"environments\" must be an array of \"project/environment\" strings")
        }
        var grants: [EnvironmentGrant] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item, let grant = EnvironmentGrant(text) else {
                throw APIError.invalidArgument(
                    "environments[\(index)] must be \"project/environment\", \"project/*\" or \"*\"",
                    details: [
                        ValidationIssue(
                            .error,
                            at: JSONPath.root.appending("environments").appending(index),
                            rule: "grant",
                            "expected project/environment, project/* or *"
                        )
                    ]
                )
            }
            grants.append(grant)
        }
        return grants
    }

    @Sendable func list(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        return JSONResponse.make(["users": .array(try await accounts.store.users().map(Self.json))])
    }

    @Sendable func create(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let body = try await RequestReading.object(request)
        let email = try RequestReading.string(body, "email")
        let role = try Self.role(try RequestReading.string(body, "role"))
        do {
            let (user, password) = try await accounts.create(
                email: email,
                name: try RequestReading.optionalString(body, "name"),
                role: role,
                environments: try Self.grants(body["environments"]) ?? [],
                actor: principal.actor
            )
            guard case .object(var object) = Self.json(user) else { return JSONResponse.make(Self.json(user)) }
            object["oneTimePassword"] = .string(password)
            return JSONResponse.make(.object(object), status: .created)
        } catch let error as AccountError {
            throw APIError.invalidArgument(error.message)
        }
    }

    @Sendable func update(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let id = context.parameters.get("id") ?? ""
        let body = try await RequestReading.object(request)
        var role: UserRole?
        if let text = try RequestReading.optionalString(body, "role") { role = try Self.role(text) }
        var disabled: Bool?
        switch body["disabled"] {
        case nil, .null?: disabled = nil
        case .bool(let value)?: disabled = value
        default: throw APIError.invalidArgument("\"disabled\" must be true or false")
        }
        let user = try await accounts.store.updateUser(
            id: id,
            role: role,
            environments: try Self.grants(body["environments"]),
            disabled: disabled,
            actor: principal.actor
        )
        return JSONResponse.make(Self.json(user))
    }

    @Sendable func resetPassword(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let id = context.parameters.get("id") ?? ""
        let password = try await accounts.resetPassword(userId: id, actor: principal.actor)
        return JSONResponse.make(["oneTimePassword": .string(password)])
    }
}
