import Hummingbird
import VaneCore
import VaneServerCore

/// A project's webhook endpoints, their deliveries and redelivery (docs/WEBHOOKS.md). Admin keys
/// and admins only: an endpoint receives every change of the project, and its secret is shown
/// once, when it is created or rotated.
struct WebhookRoutes {
    let store: ConfigStore
    let webhooks: WebhookStore
    let destination: WebhookDestination

    func register(on router: Router<VaneRequestContext>) {
        let project = router.group("v1/projects/:project")
        project.post("webhooks", use: create)
        project.get("webhooks", use: list)
        project.get("webhooks/:webhook", use: get)
        project.patch("webhooks/:webhook", use: update)
        project.delete("webhooks/:webhook", use: delete)
        project.post("webhooks/:webhook/rotate-secret", use: rotateSecret)
        project.get("webhooks/:webhook/deliveries", use: deliveries)
        project.post("webhooks/:webhook/deliveries/:message/redeliver", use: redeliver)
    }

    @Sendable func create(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let projectId = try await requireProject(context)
        let body = try await RequestReading.object(request)
        let url = try RequestReading.string(body, "url")
        try await check(url)
        let endpoint = try await webhooks.createEndpoint(
            projectId: projectId,
            url: url,
            description: try description(body) ?? "",
            events: try events(body) ?? WebhookEventType.allCases,
            enabled: try enabled(body) ?? true,
            secret: WebhookSignature.generateSecret(),
            actor: principal.actor
        )
        return JSONResponse.make(Self.endpointJSON(endpoint, showingSecret: true), status: .created)
    }

    @Sendable func list(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        let projectId = try await requireProject(context)
        let endpoints = try await webhooks.endpoints(projectId: projectId)
        return JSONResponse.make(["webhooks": .array(endpoints.map { Self.endpointJSON($0) })])
    }

    @Sendable func get(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        let projectId = try await requireProject(context)
        let endpoint = try await webhooks.endpoint(projectId: projectId, id: endpointId(context))
        return JSONResponse.make(Self.endpointJSON(endpoint))
    }

    @Sendable func update(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let projectId = try await requireProject(context)
        let body = try await RequestReading.object(request)
        let url = try RequestReading.optionalString(body, "url")
        if let url { try await check(url) }
        let endpoint = try await webhooks.updateEndpoint(
            projectId: projectId,
            id: endpointId(context),
            changes: WebhookStore.EndpointChanges(
                url: url,
                description: try description(body),
                events: try events(body),
                enabled: try enabled(body)
            ),
            actor: principal.actor
        )
        return JSONResponse.make(Self.endpointJSON(endpoint))
    }

    @Sendable func delete(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let projectId = try await requireProject(context)
        try await webhooks.deleteEndpoint(projectId: projectId, id: endpointId(context), actor: principal.actor)
        return Response(status: .noContent)
    }

    /// A new secret, shown once; the old one keeps signing beside it for `graceHours` (default 24,
    /// 0 ends it at once), so receivers can switch without missing a delivery.
    @Sendable func rotateSecret(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let projectId = try await requireProject(context)
        // The body is optional: none keeps the default grace period.
        let bytes = try await RequestReading.body(request, limit: ServerLimits.maximumSmallBodyBytes)
        let body = bytes.isEmpty ? JSONObject() : try RequestReading.object(parsing: bytes)
        let hours =
            try RequestReading.integer(body["graceHours"], name: "graceHours") ?? WebhookStore.defaultRotationGraceHours
        guard (0...WebhookStore.maximumRotationGraceHours).contains(hours) else {
            throw APIError.invalidArgument(
                "\"graceHours\" must be from 0 to \(WebhookStore.maximumRotationGraceHours) (how long the old secret keeps signing), found \(hours)"
            )
        }
        let endpoint = try await webhooks.rotateSecret(
            projectId: projectId,
            id: endpointId(context),
            newSecret: WebhookSignature.generateSecret(),
            graceUntil: Clock.nowMilliseconds() + hours * 3_600_000,
            actor: principal.actor
        )
        return JSONResponse.make(Self.endpointJSON(endpoint, showingSecret: true))
    }

    /// The endpoint's deliveries, newest first, each with its last attempt; `pageToken` is the
    /// `nextPageToken` of the page before.
    @Sendable func deliveries(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try context.requirePrincipal().require(.administer)
        let projectId = try await requireProject(context)
        var status: WebhookDeliveryStatus?
        if let text = request.uri.queryParameters.get("status") {
            guard let known = WebhookDeliveryStatus(rawValue: String(text)) else {
                throw APIError.invalidArgument(
                    "query parameter status must be pending, delivered or failed, found \"\(text.prefix(64))\""
                )
            }
            status = known
        }
        let pageSize = Int(try RequestReading.queryInteger(request, "pageSize", in: 1...100) ?? 50)
        let before = try RequestReading.queryInteger(request, "pageToken", in: 1...Int64.max)
        let page = try await webhooks.deliveries(
            projectId: projectId,
            endpointId: endpointId(context),
            status: status,
            before: before,
            limit: pageSize + 1
        )
        var object: JSONObject = ["deliveries": .array(page.prefix(pageSize).map(Self.deliveryJSON))]
        if page.count > pageSize, let last = page.prefix(pageSize).last {
            object["nextPageToken"] = .string(String(last.sequence))
        }
        return JSONResponse.make(.object(object))
    }

    /// Queues a message for the endpoint again, after whatever waits for it, with the same
    /// `webhook-id`.
    @Sendable func redeliver(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.administer)
        let projectId = try await requireProject(context)
        let delivery = try await webhooks.redeliver(
            projectId: projectId,
            endpointId: endpointId(context),
            messageId: context.parameters.get("message") ?? "",
            actor: principal.actor
        )
        return JSONResponse.make(Self.deliveryJSON(delivery), status: .accepted)
    }

    // MARK: Reading

    private func requireProject(_ context: VaneRequestContext) async throws -> String {
        let projectId = context.parameters.get("project") ?? ""
        guard try await store.project(id: projectId) != nil else { throw StorageError.projectNotFound(projectId) }
        return projectId
    }

    private func endpointId(_ context: VaneRequestContext) -> String {
        context.parameters.get("webhook") ?? ""
    }

    private func check(_ url: String) async throws(APIError) {
        do {
            try await destination.check(url)
        } catch {
            throw APIError.invalidArgument(
                error.description,
                details: [
                    ValidationIssue(.error, at: JSONPath.root.appending("url"), rule: "webhook-url", error.description)
                ]
            )
        }
    }

    private func description(_ body: JSONObject) throws(APIError) -> String? {
        guard let text = try RequestReading.optionalString(body, "description") else { return nil }
        guard text.count <= 500 else {
            throw APIError.invalidArgument("\"description\" must be at most 500 characters, found \(text.count)")
        }
        return text
    }

    private func enabled(_ body: JSONObject) throws(APIError) -> Bool? {
        switch body["enabled"] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?:
            throw APIError.invalidArgument("\"enabled\" must be true or false, found \(other.kindDescription)")
        }
    }

    private func events(_ body: JSONObject) throws(APIError) -> [WebhookEventType]? {
        guard let value = body["events"], value != .null else { return nil }
        let known = WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let items = value.arrayValue, !items.isEmpty else {
            throw APIError.invalidArgument("\"events\" must be a non-empty array of event types (\(known))")
        }
        var events: [WebhookEventType] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue, let type = WebhookEventType(rawValue: text) else {
                throw APIError.invalidArgument(
                    "events[\(index)] must be one of \(known), found \(item.stringValue.map { "\"\($0.prefix(64))\"" } ?? item.kindDescription)"
                )
            }
            if !events.contains(type) { events.append(type) }
        }
        return events
    }

    // MARK: JSON

    static func endpointJSON(_ endpoint: WebhookEndpoint, showingSecret: Bool = false) -> JSONValue {
        var object: JSONObject = [
            "id": .string(endpoint.id), "project": .string(endpoint.projectId), "url": .string(endpoint.url),
            "description": .string(endpoint.description),
            "events": .array(endpoint.events.map { .string($0.rawValue) }), "enabled": .bool(endpoint.enabled),
            "createTime": .string(Clock.rfc3339(milliseconds: endpoint.createTime)),
            "updateTime": .string(Clock.rfc3339(milliseconds: endpoint.updateTime)),
        ]
        if let expiry = endpoint.previousSecretExpiry, expiry > Clock.nowMilliseconds() {
            object["previousSecretExpiry"] = .string(Clock.rfc3339(milliseconds: expiry))
        }
        if showingSecret { object["secret"] = .string(endpoint.secret) }
        return .object(object)
    }

    static func deliveryJSON(_ delivery: WebhookDelivery) -> JSONValue {
        var object: JSONObject = [
            "message": .string(delivery.messageId), "sequence": .string(String(delivery.sequence)),
            "type": .string(delivery.eventType), "environment": .string(delivery.environmentId),
            "version": .number(JSONNumber(Int(delivery.versionNumber))), "status": .string(delivery.status.rawValue),
            "attempts": .number(JSONNumber(Int(delivery.attemptCount))),
            "createTime": .string(Clock.rfc3339(milliseconds: delivery.createTime)),
            "giveUpTime": .string(Clock.rfc3339(milliseconds: delivery.giveUpTime)),
        ]
        if delivery.status == .pending {
            object["nextAttemptTime"] = .string(Clock.rfc3339(milliseconds: delivery.nextAttemptTime))
        }
        if let attempt = delivery.lastAttempt {
            var last: JSONObject = [
                "number": .number(JSONNumber(Int(attempt.number))),
                "time": .string(Clock.rfc3339(milliseconds: attempt.time)),
                "durationMilliseconds": .number(JSONNumber(Int(attempt.durationMilliseconds))),
            ]
            if let code = attempt.statusCode { last["statusCode"] = .number(JSONNumber(code)) }
            if let error = attempt.error { last["error"] = .string(error) }
            object["lastAttempt"] = .object(last)
        }
        return .object(object)
    }
}
