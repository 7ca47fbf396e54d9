import Foundation
import Hummingbird
import VaneCore
import VaneServerCore

/// A project's webhook endpoints (docs/WEBHOOKS.md): their events, their recent deliveries with
/// the last attempt of each, creating one (its secret shown once), rotating a secret and
/// deleting. Admins only, as the API's `…/webhooks` routes are. Every change goes through
/// ``WebhookStore``, and a URL through the ``WebhookDestination`` check the API and every
/// delivery make.
struct WebhooksController: StoredPages {
    let store: ConfigStore
    let webhooks: WebhookStore
    let destination: WebhookDestination
    let renderer: ConsolePageRenderer

    /// How many of an endpoint's newest deliveries the page shows.
    static let deliveriesShown = 10

    /// Registers the routes, each in the group of the role it needs.
    func register(on routes: ConsoleRouteGroups) {
        routes.admin.get("projects/:project/webhooks", use: webhooksPage)
        routes.admin.post("projects/:project/webhooks", use: create)
        routes.admin.post("projects/:project/webhooks/:webhook/rotate-secret", use: rotateSecret)
        routes.admin.post("projects/:project/webhooks/:webhook/delete", use: delete)
    }

    struct WebhooksPage: Sendable {
        /// A secret shown once: after creating an endpoint or rotating its secret.
        struct Secret: Sendable {
            var url: String
            var secret: String
            var rotated: Bool
        }

        struct Event: Sendable {
            var value: String
            var id: String
        }

        struct Delivery: Sendable {
            var type: String
            var environment: String
            var version: Int64
            var status: String
            var created: String
            var attempts: Int64
            var lastAttempt: String?
            var result: String?
            var error: String?
            var nextAttempt: String?
        }

        struct Endpoint: Sendable {
            var id: String
            var url: String
            var description: String
            var events: String
            var enabled: Bool
            var created: String
            var previousSecretUntil: String?
            var deliveries: [Delivery]
            var hasDeliveries: Bool
            var rotateAction: String
            var deleteAction: String
        }

        var projectName: String
        var projectId: String
        var secret: Secret?
        var error: String?
        var url: String
        var description: String
        var events: [Event]
        var endpoints: [Endpoint]
        var hasEndpoints: Bool
        var createAction: String
        var csrf: String
        var graceHours: Int64
    }

    func render(
        _ context: VaneRequestContext,
        secret: WebhooksPage.Secret? = nil,
        error: String? = nil,
        entered: (url: String, description: String) = ("", ""),
        flash: ConsoleChrome.Flash? = nil
    ) async throws -> Response {
        let (user, session, _) = try context.signedIn()
        let project = try await project(context)
        let base = "/projects/\(ConsolePaths.encode(project.id))/webhooks"
        var endpoints: [WebhooksPage.Endpoint] = []
        let now = Clock.nowMilliseconds()
        for endpoint in try await webhooks.endpoints(projectId: project.id) {
            let deliveries = try await webhooks.deliveries(
                projectId: project.id,
                endpointId: endpoint.id,
                limit: Self.deliveriesShown
            )
            let path = "\(base)/\(ConsolePaths.encode(endpoint.id))"
            endpoints.append(
                WebhooksPage.Endpoint(
                    id: endpoint.id,
                    url: endpoint.url,
                    description: endpoint.description,
                    events: endpoint.events.map(\.rawValue).joined(separator: ", "),
                    enabled: endpoint.enabled,
                    created: Self.displayTime(endpoint.createTime),
                    previousSecretUntil: endpoint.previousSecretExpiry.flatMap {
                        $0 > now ? Self.displayTime($0) : nil
                    },
                    deliveries: deliveries.map(Self.delivery),
                    hasDeliveries: !deliveries.isEmpty,
                    rotateAction: "\(path)/rotate-secret",
                    deleteAction: "\(path)/delete"
                )
            )
        }
        let page = WebhooksPage(
            projectName: project.name,
            projectId: project.id,
            secret: secret,
            error: error,
            url: entered.url,
            description: entered.description,
            events: WebhookEventType.allCases.map {
                WebhooksPage.Event(
                    value: $0.rawValue,
                    id: "event-" + $0.rawValue.replacingOccurrences(of: ".", with: "-")
                )
            },
            endpoints: endpoints,
            hasEndpoints: !endpoints.isEmpty,
            createAction: base,
            csrf: session.csrfToken,
            graceHours: WebhookStore.defaultRotationGraceHours
        )
        return renderer.render(
            .webhooks,
            chrome: chrome("Webhooks of \(project.name)", user: user, section: "/", flash: flash),
            page: page,
            context: context,
            status: error == nil ? .ok : .badRequest
        )
    }

    static func delivery(_ delivery: WebhookDelivery) -> WebhooksPage.Delivery {
        let attempt = delivery.lastAttempt
        return WebhooksPage.Delivery(
            type: delivery.eventType,
            environment: delivery.environmentId,
            version: delivery.versionNumber,
            status: delivery.status.rawValue,
            created: displayTime(delivery.createTime),
            attempts: delivery.attemptCount,
            lastAttempt: attempt.map { displayTime($0.time) },
            result: attempt.map { attempt in
                attempt.statusCode.map { "HTTP \($0)" } ?? "no answer"
            },
            error: attempt?.error,
            nextAttempt: delivery.status == .pending ? displayTime(delivery.nextAttemptTime) : nil
        )
    }

    @Sendable func webhooksPage(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let query = ConsoleForm.query(request)
        return try await render(context, flash: query["deleted"] != nil ? .ok("Endpoint deleted.") : nil)
    }

    @Sendable func create(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        let form = try await ConsoleForm.read(request, context: context)
        let project = try await project(context)
        let url = form.text("url") ?? ""
        let description = form.text("description") ?? ""
        let entered = (url: url, description: description)
        guard description.count <= 500 else {
            return try await render(context, error: "the description has at most 500 characters", entered: entered)
        }
        let events = WebhookEventType.allCases.filter { form.fields["event." + $0.rawValue] != nil }
        guard !events.isEmpty else {
            return try await render(context, error: "choose at least one event to send", entered: entered)
        }
        do {
            try await destination.check(url)
        } catch {
            return try await render(context, error: error.description, entered: entered)
        }
        let endpoint = try await webhooks.createEndpoint(
            projectId: project.id,
            url: url,
            description: description,
            events: events,
            enabled: true,
            secret: WebhookSignature.generateSecret(),
            actor: principal.actor
        )
        return try await render(
            context,
            secret: WebhooksPage.Secret(url: endpoint.url, secret: endpoint.secret, rotated: false)
        )
    }

    @Sendable func rotateSecret(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let project = try await project(context)
        let endpoint = try await webhooks.rotateSecret(
            projectId: project.id,
            id: context.parameters.get("webhook") ?? "",
            newSecret: WebhookSignature.generateSecret(),
            graceUntil: Clock.nowMilliseconds() + WebhookStore.defaultRotationGraceHours * 3_600_000,
            actor: principal.actor
        )
        return try await render(
            context,
            secret: WebhooksPage.Secret(url: endpoint.url, secret: endpoint.secret, rotated: true)
        )
    }

    @Sendable func delete(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let (_, _, principal) = try context.signedIn()
        _ = try await ConsoleForm.read(request, context: context)
        let project = try await project(context)
        try await webhooks.deleteEndpoint(
            projectId: project.id,
            id: context.parameters.get("webhook") ?? "",
            actor: principal.actor
        )
        throw ConsoleRedirect(location: "/projects/\(ConsolePaths.encode(project.id))/webhooks?deleted=1")
    }

    /// The project in the path, checked to exist.
    func project(_ context: VaneRequestContext) async throws -> VaneServerCore.Project {
        let id = context.parameters.get("project") ?? ""
        guard let project = try await store.project(id: id) else {
            throw ConsolePageError.notFound("there is no project \"\(id.prefix(64))\"")
        }
        return project
    }
}
