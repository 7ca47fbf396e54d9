import Foundation
package import SQLKit
import VaneCore

/// Webhook endpoints, the outbox of messages and their deliveries, over SQLite and PostgreSQL.
///
/// Messages are written by ``enqueue(_:kind:change:projectId:environmentId:version:actor:)``
/// inside the transaction of the change they describe, so a change without its message (or the
/// other way round) cannot be committed. Deliveries are sent by one node at a time: a node claims
/// a delivery with a lease (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite has one node), and per
/// endpoint only the oldest pending delivery is ever claimable, so an endpoint receives its
/// messages in the order their changes committed.
package final class WebhookStore: Sendable {
    /// How long a rotated-out secret keeps signing beside the new one unless the rotation says
    /// (the API's and the console's rotations).
    package static let defaultRotationGraceHours: Int64 = 24
    /// The longest a rotated-out secret keeps signing, in hours (a week).
    package static let maximumRotationGraceHours: Int64 = 168

    package let engine: DatabaseEngine

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// How long a delivery is retried: 3 days after it was recorded.
    package static let retryWindowMilliseconds: Int64 = 3 * 24 * 3600 * 1000

    // MARK: The outbox

    /// Records a change's message for every enabled endpoint of its project that wants its type.
    /// Call it inside the change's transaction.
    /// - Parameter version: The environment's template version the change made or happened on.
    package static func enqueue(
        _ database: any SQLDatabase,
        kind: DatabaseEngine.Kind,
        change: WebhookChange,
        projectId: String,
        environmentId: String,
        version: Int64,
        actor: Actor
    ) async throws {
        // Locked in id order on PostgreSQL: changes of one project take turns numbering each
        // endpoint's deliveries, so the numbers follow commit order.
        let lock = kind == .postgres ? " FOR UPDATE" : ""
        let rows = try await database.raw(
            """
            SELECT id, events, next_sequence FROM webhook_endpoints \
            WHERE project_id = \(bind: projectId) AND enabled = 1 ORDER BY id\(unsafeRaw: lock)
            """
        ).all()
        var targets: [(id: String, sequence: Int64)] = []
        for row in rows {
            let events = try Self.events(try row.decode(column: "events", as: String.self))
            guard events.contains(change.type) else { continue }
            targets.append(
                (try row.decode(column: "id", as: String.self), try row.decode(column: "next_sequence", as: Int64.self))
            )
        }
        guard !targets.isEmpty else { return }
        let now = Clock.nowMilliseconds()
        let messageId = "msg_" + RandomBytes.make(12).withUnsafeBytes { Hex.encode($0) }
        let payload = change.payload(
            projectId: projectId,
            environmentId: environmentId,
            version: version,
            actor: actor,
            time: now
        )
        try await database.raw(
            """
            INSERT INTO webhook_messages (id, project_id, environment_id, event_type, version_number, payload, create_time) \
            VALUES (\(bind: messageId), \(bind: projectId), \(bind: environmentId), \(bind: change.type.rawValue), \
            \(bind: version), \(bind: payload), \(bind: now))
            """
        ).run()
        for target in targets {
            try await insertDelivery(
                database,
                endpointId: target.id,
                sequence: target.sequence,
                messageId: messageId,
                now: now
            )
        }
    }

    private static func insertDelivery(
        _ database: any SQLDatabase,
        endpointId: String,
        sequence: Int64,
        messageId: String,
        now: Int64
    ) async throws {
        try await database.raw(
            """
            INSERT INTO webhook_deliveries (endpoint_id, sequence, message_id, status, attempt_count, next_attempt_time, \
            give_up_time, create_time) VALUES (\(bind: endpointId), \(bind: sequence), \(bind: messageId), \
            \(bind: WebhookDeliveryStatus.pending.rawValue), 0, \(bind: now), \(bind: now + retryWindowMilliseconds), \(bind: now))
            """
        ).run()
        try await database.raw(
            "UPDATE webhook_endpoints SET next_sequence = \(bind: sequence + 1) WHERE id = \(bind: endpointId)"
        ).run()
    }

    // MARK: Endpoints

    /// Stores a new endpoint.
    /// - Throws: ``StorageError/projectNotFound(_:)``.
    package func createEndpoint(
        projectId: String,
        url: String,
        description: String,
        events: [WebhookEventType],
        enabled: Bool,
        secret: String,
        actor: Actor
    ) async throws -> WebhookEndpoint {
        let now = Clock.nowMilliseconds()
        let endpoint = WebhookEndpoint(
            id: "ep_" + RandomBytes.make(12).withUnsafeBytes { Hex.encode($0) },
            projectId: projectId,
            url: url,
            description: description,
            events: events,
            secret: secret,
            enabled: enabled,
            createTime: now,
            updateTime: now
        )
        try await engine.transaction { database in
            guard
                try await database.raw("SELECT id FROM projects WHERE id = \(bind: projectId)").first() != nil
            else { throw StorageError.projectNotFound(projectId) }
            try await database.raw(
                """
                INSERT INTO webhook_endpoints (id, project_id, url, description, events, secret, enabled, next_sequence, \
                create_time, update_time) VALUES (\(bind: endpoint.id), \(bind: projectId), \(bind: url), \
                \(bind: description), \(bind: Self.eventsText(events)), \(bind: secret), \(bind: enabled ? 1 : 0), 1, \
                \(bind: now), \(bind: now))
                """
            ).run()
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .webhookCreate,
                projectId: projectId,
                environmentId: nil,
                summary: "created webhook endpoint \(endpoint.id) for \(url)",
                details: Self.auditDetails(endpoint)
            )
        }
        return endpoint
    }

    /// A project's endpoints, oldest first.
    package func endpoints(projectId: String) async throws -> [WebhookEndpoint] {
        try await engine.withSession { database in
            try await database.raw(
                "SELECT * FROM webhook_endpoints WHERE project_id = \(bind: projectId) ORDER BY create_time, id"
            ).all().map(Self.endpoint)
        }
    }

    /// One endpoint of a project.
    /// - Throws: ``StorageError/webhookEndpointNotFound(_:)``.
    package func endpoint(projectId: String, id: String) async throws -> WebhookEndpoint {
        try await engine.withSession { database in
            try await Self.endpoint(database, projectId: projectId, id: id)
        }
    }

    /// What an update changes; nil members stay as they are.
    package struct EndpointChanges: Sendable {
        package var url: String?
        package var description: String?
        package var events: [WebhookEventType]?
        package var enabled: Bool?

        package init(
            url: String? = nil,
            description: String? = nil,
            events: [WebhookEventType]? = nil,
            enabled: Bool? = nil
        ) {
            self.url = url
            self.description = description
            self.events = events
            self.enabled = enabled
        }
    }

    /// Changes an endpoint's URL, description, events or enabled flag.
    /// - Throws: ``StorageError/webhookEndpointNotFound(_:)``.
    package func updateEndpoint(
        projectId: String,
        id: String,
        changes: EndpointChanges,
        actor: Actor
    ) async throws -> WebhookEndpoint {
        try await engine.transaction { database in
            var endpoint = try await Self.endpoint(database, projectId: projectId, id: id)
            if let url = changes.url { endpoint.url = url }
            if let description = changes.description { endpoint.description = description }
            if let events = changes.events { endpoint.events = events }
            if let enabled = changes.enabled { endpoint.enabled = enabled }
            endpoint.updateTime = Clock.nowMilliseconds()
            try await database.raw(
                """
                UPDATE webhook_endpoints SET url = \(bind: endpoint.url), description = \(bind: endpoint.description), \
                events = \(bind: Self.eventsText(endpoint.events)), enabled = \(bind: endpoint.enabled ? 1 : 0), \
                update_time = \(bind: endpoint.updateTime) WHERE id = \(bind: id)
                """
            ).run()
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .webhookUpdate,
                projectId: projectId,
                environmentId: nil,
                summary: "changed webhook endpoint \(id)",
                details: Self.auditDetails(endpoint)
            )
            return endpoint
        }
    }

    /// Replaces an endpoint's secret; the old one keeps signing beside it until `graceUntil`.
    /// - Throws: ``StorageError/webhookEndpointNotFound(_:)``.
    package func rotateSecret(
        projectId: String,
        id: String,
        newSecret: String,
        graceUntil: Int64,
        actor: Actor
    ) async throws -> WebhookEndpoint {
        try await engine.transaction { database in
            var endpoint = try await Self.endpoint(database, projectId: projectId, id: id)
            endpoint.previousSecret = endpoint.secret
            endpoint.previousSecretExpiry = graceUntil
            endpoint.secret = newSecret
            endpoint.updateTime = Clock.nowMilliseconds()
            try await database.raw(
                """
                UPDATE webhook_endpoints SET secret = \(bind: newSecret), previous_secret = \(bind: endpoint.previousSecret), \
                previous_secret_expiry = \(bind: graceUntil), update_time = \(bind: endpoint.updateTime) WHERE id = \(bind: id)
                """
            ).run()
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .webhookRotateSecret,
                projectId: projectId,
                environmentId: nil,
                summary: "rotated the secret of webhook endpoint \(id)",
                details: [
                    "endpoint": .string(id), "previousSecretExpiry": .string(Clock.rfc3339(milliseconds: graceUntil)),
                ]
            )
            return endpoint
        }
    }

    /// Deletes an endpoint with its deliveries (pending ones are not sent).
    /// - Throws: ``StorageError/webhookEndpointNotFound(_:)``.
    package func deleteEndpoint(projectId: String, id: String, actor: Actor) async throws {
        try await engine.transaction { database in
            let endpoint = try await Self.endpoint(database, projectId: projectId, id: id)
            try await database.raw("DELETE FROM webhook_attempts WHERE endpoint_id = \(bind: id)").run()
            try await database.raw("DELETE FROM webhook_deliveries WHERE endpoint_id = \(bind: id)").run()
            try await database.raw("DELETE FROM webhook_endpoints WHERE id = \(bind: id)").run()
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .webhookDelete,
                projectId: projectId,
                environmentId: nil,
                summary: "deleted webhook endpoint \(id) for \(endpoint.url)",
                details: Self.auditDetails(endpoint)
            )
        }
    }

    // MARK: Deliveries

    /// An endpoint's deliveries, newest first, each with its last attempt.
    /// - Parameter before: A sequence number from a previous page: only older deliveries.
    /// - Throws: ``StorageError/webhookEndpointNotFound(_:)``.
    package func deliveries(
        projectId: String,
        endpointId: String,
        status: WebhookDeliveryStatus? = nil,
        before: Int64? = nil,
        limit: Int
    ) async throws -> [WebhookDelivery] {
        try await engine.withSession { database in
            _ = try await Self.endpoint(database, projectId: projectId, id: endpointId)
            var query: SQLQueryString = """
                SELECT d.*, m.event_type, m.environment_id, m.version_number FROM webhook_deliveries d \
                JOIN webhook_messages m ON m.id = d.message_id \
                WHERE d.endpoint_id = \(bind: endpointId) AND d.sequence < \(bind: before ?? Int64.max)
                """
            if let status {
                query.appendInterpolation(unsafeRaw: " AND d.status = ")
                query.appendInterpolation(bind: status.rawValue)
            }
            query.appendInterpolation(unsafeRaw: " ORDER BY d.sequence DESC LIMIT ")
            query.appendInterpolation(bind: max(1, min(limit, 100)))
            var deliveries: [WebhookDelivery] = []
            for row in try await database.raw(query).all() {
                var delivery = try Self.delivery(row)
                delivery.lastAttempt = try await Self.lastAttempt(database, delivery)
                deliveries.append(delivery)
            }
            return deliveries
        }
    }

    /// Sends a message to an endpoint again, after everything already waiting for it, with the
    /// same `webhook-id`.
    /// - Throws: ``StorageError/webhookEndpointNotFound(_:)``, ``StorageError/webhookMessageNotFound(_:)``.
    package func redeliver(
        projectId: String,
        endpointId: String,
        messageId: String,
        actor: Actor
    ) async throws -> WebhookDelivery {
        let kind = engine.kind
        return try await engine.transaction { database in
            let lock = kind == .postgres ? " FOR UPDATE" : ""
            guard
                let row = try await database.raw(
                    """
                    SELECT next_sequence FROM webhook_endpoints WHERE id = \(bind: endpointId) \
                    AND project_id = \(bind: projectId)\(unsafeRaw: lock)
                    """
                ).first()
            else { throw StorageError.webhookEndpointNotFound(endpointId) }
            let sequence = try row.decode(column: "next_sequence", as: Int64.self)
            guard
                try await database.raw(
                    "SELECT 1 AS found FROM webhook_deliveries WHERE endpoint_id = \(bind: endpointId) AND message_id = \(bind: messageId)"
                ).first() != nil
            else { throw StorageError.webhookMessageNotFound(messageId) }
            try await Self.insertDelivery(
                database,
                endpointId: endpointId,
                sequence: sequence,
                messageId: messageId,
                now: Clock.nowMilliseconds()
            )
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: .webhookRedeliver,
                projectId: projectId,
                environmentId: nil,
                summary: "redelivering message \(messageId) to webhook endpoint \(endpointId)",
                details: ["endpoint": .string(endpointId), "message": .string(messageId)]
            )
            guard
                let stored = try await database.raw(
                    """
                    SELECT d.*, m.event_type, m.environment_id, m.version_number FROM webhook_deliveries d \
                    JOIN webhook_messages m ON m.id = d.message_id \
                    WHERE d.endpoint_id = \(bind: endpointId) AND d.sequence = \(bind: sequence)
                    """
                ).first()
            else { throw StorageError.webhookMessageNotFound(messageId) }
            return try Self.delivery(stored)
        }
    }

    /// Takes the lease of up to `limit` deliveries that are due: per enabled endpoint, the oldest
    /// pending one, when its time has come and nobody else holds it.
    package func claim(owner: String, leaseMilliseconds: Int64, limit: Int) async throws -> [ClaimedWebhookDelivery] {
        let kind = engine.kind
        return try await engine.transaction { database in
            let now = Clock.nowMilliseconds()
            let pending = WebhookDeliveryStatus.pending.rawValue
            let lock = kind == .postgres ? " FOR UPDATE OF d SKIP LOCKED" : ""
            let rows = try await database.raw(
                """
                SELECT d.*, m.event_type, m.environment_id, m.version_number, m.payload FROM webhook_deliveries d \
                JOIN webhook_messages m ON m.id = d.message_id \
                JOIN webhook_endpoints e ON e.id = d.endpoint_id \
                WHERE d.status = \(bind: pending) AND d.next_attempt_time <= \(bind: now) AND e.enabled = 1 \
                AND (d.lease_expiry IS NULL OR d.lease_expiry < \(bind: now)) \
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.endpoint_id = d.endpoint_id \
                AND o.status = \(bind: pending) AND o.sequence < d.sequence) \
                ORDER BY d.next_attempt_time, d.endpoint_id LIMIT \(bind: limit)\(unsafeRaw: lock)
                """
            ).all()
            var claimed: [ClaimedWebhookDelivery] = []
            for row in rows {
                let delivery = try Self.delivery(row)
                try await database.raw(
                    """
                    UPDATE webhook_deliveries SET lease_owner = \(bind: owner), lease_expiry = \(bind: now + leaseMilliseconds) \
                    WHERE endpoint_id = \(bind: delivery.endpointId) AND sequence = \(bind: delivery.sequence)
                    """
                ).run()
                guard
                    let endpointRow = try await database.raw(
                        "SELECT * FROM webhook_endpoints WHERE id = \(bind: delivery.endpointId)"
                    ).first()
                else { continue }
                claimed.append(
                    ClaimedWebhookDelivery(
                        delivery: delivery,
                        endpoint: try Self.endpoint(endpointRow),
                        payload: try row.decode(column: "payload", as: String.self)
                    )
                )
            }
            return claimed
        }
    }

    /// Records an attempt and the delivery's next state, if this node still holds its lease.
    /// - Returns: False when the lease was lost (another node took the delivery over).
    @discardableResult
    package func record(
        _ attempt: WebhookAttempt,
        outcome: WebhookAttemptOutcome,
        for delivery: WebhookDelivery,
        owner: String
    ) async throws -> Bool {
        try await engine.transaction { database in
            guard
                try await database.raw(
                    """
                    SELECT 1 AS held FROM webhook_deliveries WHERE endpoint_id = \(bind: delivery.endpointId) \
                    AND sequence = \(bind: delivery.sequence) AND lease_owner = \(bind: owner) \
                    AND status = \(bind: WebhookDeliveryStatus.pending.rawValue)
                    """
                ).first() != nil
            else { return false }
            try await database.raw(
                """
                INSERT INTO webhook_attempts (endpoint_id, sequence, attempt_number, attempt_time, status_code, error, \
                duration_milliseconds) VALUES (\(bind: delivery.endpointId), \(bind: delivery.sequence), \
                \(bind: attempt.number), \(bind: attempt.time), \(bind: attempt.statusCode), \(bind: attempt.error), \
                \(bind: attempt.durationMilliseconds))
                """
            ).run()
            let status: WebhookDeliveryStatus
            var next = delivery.nextAttemptTime
            switch outcome {
            case .delivered: status = .delivered
            case .gaveUp: status = .failed
            case .retry(let time):
                status = .pending
                next = time
            }
            try await database.raw(
                """
                UPDATE webhook_deliveries SET status = \(bind: status.rawValue), attempt_count = \(bind: attempt.number), \
                next_attempt_time = \(bind: next), lease_owner = NULL, lease_expiry = NULL \
                WHERE endpoint_id = \(bind: delivery.endpointId) AND sequence = \(bind: delivery.sequence)
                """
            ).run()
            return true
        }
    }

    /// Gives up every lease `owner` holds: a node that runs alone (SQLite) calls it on start, so
    /// a delivery cut by a crash is sent again at once rather than when its lease runs out.
    package func releaseLeases(owner: String? = nil) async throws {
        try await engine.withSession { database in
            if let owner {
                try await database.raw(
                    "UPDATE webhook_deliveries SET lease_owner = NULL, lease_expiry = NULL WHERE lease_owner = \(bind: owner)"
                ).run()
            } else {
                try await database.raw(
                    "UPDATE webhook_deliveries SET lease_owner = NULL, lease_expiry = NULL WHERE lease_owner IS NOT NULL"
                ).run()
            }
        }
    }

    // MARK: Rows

    private static func endpoint(
        _ database: any SQLDatabase,
        projectId: String,
        id: String
    ) async throws
        -> WebhookEndpoint
    {
        guard
            let row = try await database.raw(
                "SELECT * FROM webhook_endpoints WHERE id = \(bind: id) AND project_id = \(bind: projectId)"
            ).first()
        else { throw StorageError.webhookEndpointNotFound(id) }
        return try endpoint(row)
    }

    private static func endpoint(_ row: any SQLRow) throws -> WebhookEndpoint {
        WebhookEndpoint(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            url: try row.decode(column: "url", as: String.self),
            description: try row.decode(column: "description", as: String.self),
            events: try events(try row.decode(column: "events", as: String.self)),
            secret: try row.decode(column: "secret", as: String.self),
            previousSecret: try row.decode(column: "previous_secret", as: String?.self),
            previousSecretExpiry: try row.decode(column: "previous_secret_expiry", as: Int64?.self),
            enabled: try row.decode(column: "enabled", as: Int64.self) != 0,
            createTime: try row.decode(column: "create_time", as: Int64.self),
            updateTime: try row.decode(column: "update_time", as: Int64.self)
        )
    }

    private static func delivery(_ row: any SQLRow) throws -> WebhookDelivery {
        let statusText = try row.decode(column: "status", as: String.self)
        return WebhookDelivery(
            endpointId: try row.decode(column: "endpoint_id", as: String.self),
            sequence: try row.decode(column: "sequence", as: Int64.self),
            messageId: try row.decode(column: "message_id", as: String.self),
            eventType: try row.decode(column: "event_type", as: String.self),
            environmentId: try row.decode(column: "environment_id", as: String.self),
            versionNumber: try row.decode(column: "version_number", as: Int64.self),
            status: WebhookDeliveryStatus(rawValue: statusText) ?? .pending,
            attemptCount: try row.decode(column: "attempt_count", as: Int64.self),
            nextAttemptTime: try row.decode(column: "next_attempt_time", as: Int64.self),
            giveUpTime: try row.decode(column: "give_up_time", as: Int64.self),
            createTime: try row.decode(column: "create_time", as: Int64.self)
        )
    }

    private static func lastAttempt(
        _ database: any SQLDatabase,
        _ delivery: WebhookDelivery
    ) async throws
        -> WebhookAttempt?
    {
        try await database.raw(
            """
            SELECT * FROM webhook_attempts WHERE endpoint_id = \(bind: delivery.endpointId) \
            AND sequence = \(bind: delivery.sequence) ORDER BY attempt_number DESC LIMIT 1
            """
        ).first().map { row in
            WebhookAttempt(
                number: try row.decode(column: "attempt_number", as: Int64.self),
                time: try row.decode(column: "attempt_time", as: Int64.self),
                statusCode: try row.decode(column: "status_code", as: Int64?.self).map { Int($0) },
                error: try row.decode(column: "error", as: String?.self),
                durationMilliseconds: try row.decode(column: "duration_milliseconds", as: Int64.self)
            )
        }
    }

    /// Reads the stored JSON array of event types; a type this server does not know is skipped
    /// (written by a newer server).
    private static func events(_ text: String) throws -> [WebhookEventType] {
        (try JSONValue.parse(text)).arrayValue?.compactMap { $0.stringValue.flatMap(WebhookEventType.init) } ?? []
    }

    private static func eventsText(_ events: [WebhookEventType]) -> String {
        JSONValue.array(events.map { .string($0.rawValue) }).serialized(.compact)
    }

    /// What the audit log keeps of an endpoint: never its secret.
    private static func auditDetails(_ endpoint: WebhookEndpoint) -> JSONValue {
        [
            "endpoint": .string(endpoint.id), "url": .string(endpoint.url),
            "events": .array(endpoint.events.map { .string($0.rawValue) }), "enabled": .bool(endpoint.enabled),
        ]
    }
}
