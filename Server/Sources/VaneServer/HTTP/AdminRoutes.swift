import Hummingbird
import VaneCore
import VaneServerCore

/// Projects, environments, API keys and the audit log (admin keys only).
struct AdminRoutes {
    let store: ConfigStore
    let keys: KeyIndex
    let streamHub: StreamHub

    var administration: KeyAdministration { KeyAdministration(store: store, keys: keys, streamHub: streamHub) }

    func register(on router: Router<VaneRequestContext>) {
        let v1 = router.group("v1")
        v1.post("projects", use: createProject)
        v1.get("projects", use: listProjects)
        v1.get("projects/:project", use: getProject)
        v1.post("projects/:project/environments", use: createEnvironment)
        v1.get("projects/:project/environments", use: listEnvironments)
        v1.patch("projects/:project/environments/:environment", use: updateEnvironment)
        v1.get("projects/:project/environments/:environment/audit", use: environmentAudit)
        v1.get("audit", use: instanceAudit)
        v1.post("keys", use: createKey)
        v1.get("keys", use: listKeys)
        v1.delete("keys/:id", use: revokeKey)
    }

    func identifier(_ object: JSONObject, kind: String) throws(APIError) -> String {
        let id = try RequestReading.string(object, "id")
        guard Identifier.isValid(id) else {
            throw APIError.invalidArgument(
                "\(kind) id \"\(id)\" must be 1-63 lower-case letters, digits or dashes, starting with a letter or digit",
                details: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("id"),
                        rule: "identifier",
                        "expected ^[a-z0-9][a-z0-9-]{0,62}$"
                    )
                ]
            )
        }
        return id
    }

    @Sendable func createProject(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let body = try await RequestReading.object(request)
        let id = try identifier(body, kind: "project")
        let name = try RequestReading.optionalString(body, "name") ?? id
        let project = try await store.createProject(id: id, name: name, actor: principal.actor)
        return JSONResponse.make(try await projectJSON(project), status: .created)
    }

    @Sendable func listProjects(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        var projects: [JSONValue] = []
        for project in try await store.projects() { projects.append(try await projectJSON(project)) }
        return JSONResponse.make(["projects": .array(projects)])
    }

    @Sendable func getProject(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        let id = context.parameters.get("project") ?? ""
        guard let project = try await store.project(id: id) else { throw StorageError.projectNotFound(id) }
        return JSONResponse.make(try await projectJSON(project))
    }

    func projectJSON(_ project: Project) async throws -> JSONValue {
        let environments = try await store.environments(projectId: project.id)
        return [
            "id": .string(project.id), "name": .string(project.name),
            "createTime": .string(Clock.rfc3339(milliseconds: project.createTime)),
            "environments": .array(environments.map(Self.environmentJSON)),
        ]
    }

    static func environmentJSON(_ environment: VaneServerCore.Environment) -> JSONValue {
        var object: JSONObject = [
            "id": .string(environment.id), "name": .string(environment.name),
            "createTime": .string(Clock.rfc3339(milliseconds: environment.createTime)),
            "templateVersion": .string(String(environment.templateVersion)),
        ]
        if let colour = environment.colour { object["colour"] = .string(colour.rawValue) }
        return .object(object)
    }

    /// Sets an environment's colour (a palette name such as `"red"`), or clears it with `null`.
    @Sendable func updateEnvironment(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let key = try RequestReading.environment(context)
        let body = try await RequestReading.object(request)
        let colour: EnvironmentColour?
        switch body["colour"] {
        case .null?: colour = nil
        case .string(let text)?:
            do {
                colour = try EnvironmentColour(name: text)
            } catch {
                throw APIError.invalidArgument(
                    error.description,
                    details: [
                        ValidationIssue(
                            .error,
                            at: JSONPath.root.appending("colour"),
                            rule: "colour",
                            "expected one of the palette's names"
                        )
                    ]
                )
            }
        default:
            throw APIError.invalidArgument(
                "\"colour\" is required: a palette name such as \"red\", or null to clear it",
                details: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("colour"),
                        rule: "required",
                        "expected a colour name or null"
                    )
                ]
            )
        }
        let environment = try await store.setEnvironmentColour(key, to: colour, actor: principal.actor)
        return JSONResponse.make(Self.environmentJSON(environment))
    }

    @Sendable func createEnvironment(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let projectId = context.parameters.get("project") ?? ""
        let body = try await RequestReading.object(request)
        let id = try identifier(body, kind: "environment")
        let name = try RequestReading.optionalString(body, "name") ?? id
        let environment = try await store.createEnvironment(
            projectId: projectId,
            id: id,
            name: name,
            actor: principal.actor
        )
        return JSONResponse.make(Self.environmentJSON(environment), status: .created)
    }

    @Sendable func listEnvironments(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        let projectId = context.parameters.get("project") ?? ""
        guard try await store.project(id: projectId) != nil else {
            throw StorageError.projectNotFound(projectId)
        }
        let environments = try await store.environments(projectId: projectId)
        return JSONResponse.make(["environments": .array(environments.map(Self.environmentJSON))])
    }

    @Sendable func createKey(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let body = try await RequestReading.object(request)
        let name = try RequestReading.string(body, "name")
        let roleName = try RequestReading.string(body, "role")
        guard let role = KeyRole(rawValue: roleName) else {
            throw APIError.invalidArgument("role must be admin, server or client, found \"\(roleName)\"")
        }
        let projectId = try RequestReading.optionalString(body, "project")
        let environmentId = try RequestReading.optionalString(body, "environment")
        let (key, secret): (StoredKey, String)
        do {
            (key, secret) = try await administration.create(
                name: name,
                role: role,
                projectId: projectId,
                environmentId: environmentId,
                actor: principal.actor
            )
        } catch let refusal as KeyAdministration.Refusal {
            throw APIError.invalidArgument(refusal.message)
        }
        guard case .object(var object) = Self.keyJSON(key) else {
            return JSONResponse.make(Self.keyJSON(key), status: .created)
        }
        object["key"] = .string(secret)
        return JSONResponse.make(.object(object), status: .created)
    }

    @Sendable func listKeys(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        return JSONResponse.make(["keys": .array(try await store.keys().map(Self.keyJSON))])
    }

    @Sendable func revokeKey(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let id = context.parameters.get("id") ?? ""
        try await administration.revoke(id: id, actor: principal.actor)
        return Response(status: .noContent)
    }

    static func keyJSON(_ key: StoredKey) -> JSONValue {
        var object: JSONObject = [
            "id": .string(key.id), "name": .string(key.name), "role": .string(key.role.rawValue),
            "createTime": .string(Clock.rfc3339(milliseconds: key.createTime)),
        ]
        if let project = key.projectId { object["project"] = .string(project) }
        if let environment = key.environmentId { object["environment"] = .string(environment) }
        if let revoked = key.revokeTime { object["revokeTime"] = .string(Clock.rfc3339(milliseconds: revoked)) }
        return .object(object)
    }

    @Sendable func environmentAudit(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.readAudit)
        let environment = try RequestReading.environment(context)
        return try await auditPage(request, projectId: environment.projectId, environmentId: environment.environmentId)
    }

    @Sendable func instanceAudit(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.readAudit)
        return try await auditPage(request, projectId: nil, environmentId: nil)
    }

    func auditPage(_ request: Request, projectId: String?, environmentId: String?) async throws -> Response {
        let size = try RequestReading.queryInteger(request, "pageSize", in: 1...300) ?? 100
        let page: Page<AuditEntry>
        var filter = AuditFilter()
        filter.actor = request.uri.queryParameters.get("actor").map { String($0.prefix(254)) }
        filter.action = request.uri.queryParameters.get("action").map { String($0.prefix(100)) }
        filter.startTime = try RequestReading.queryTime(request, "startTime")
        filter.endTime = try RequestReading.queryTime(request, "endTime")
        filter.flag = request.uri.queryParameters.get("flag").map { String($0.prefix(256)) }
        page = try await store.audit(
            projectId: projectId,
            environmentId: environmentId,
            filter: filter,
            pageSize: Int(size),
            pageToken: request.uri.queryParameters.get("pageToken").map { String($0) }
        )
        let entries: [JSONValue] = page.items.map { entry in
            var actor: JSONObject = ["name": .string(entry.actor.name)]
            if let keyId = entry.actor.keyId { actor["keyId"] = .string(keyId) }
            if let userId = entry.actor.userId { actor["userId"] = .string(userId) }
            var object: JSONObject = [
                "id": .string(entry.id), "time": .string(Clock.rfc3339(milliseconds: entry.time)),
                "actor": .object(actor),
                "action": .string(entry.action), "summary": .string(entry.summary), "details": entry.details,
            ]
            if let project = entry.projectId { object["project"] = .string(project) }
            if let environment = entry.environmentId { object["environment"] = .string(environment) }
            object["kind"] = .string(entry.kind.rawValue)
            object["flags"] = .array(entry.flags.map(JSONValue.string))
            if let message = entry.message { object["message"] = .string(message) }
            return .object(object)
        }
        var object: JSONObject = ["entries": .array(entries)]
        if let next = page.nextPageToken { object["nextPageToken"] = .string(next) }
        return JSONResponse.make(.object(object))
    }
}
