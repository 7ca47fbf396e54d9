import AsyncHTTPClient
import Foundation
package import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Sends the webhook outbox: claims due deliveries (``WebhookStore/claim(owner:leaseMilliseconds:limit:)``),
/// posts each signed as Standard Webhooks says, records every attempt, and schedules failures
/// again with ``WebhookRetrySchedule`` for 3 days.
///
/// At least once, never lost: a delivery stays pending until an attempt is answered with a 2xx
/// and recorded. A node killed while sending leaves its lease to expire; then it (or another
/// node) sends the same message again with the same `webhook-id`, which receivers dedupe on.
package struct WebhookDeliveryService: Service {
    package struct Settings: Sendable {
        /// Where deliveries may go.
        package var destination: WebhookDestination
        package var schedule: WebhookRetrySchedule
        /// How long a claim holds a delivery; another node takes it over after that.
        package var leaseSeconds: Double
        /// How often the outbox is read when it had nothing due.
        package var pollIntervalMilliseconds: Int64 = 500
        /// How long an endpoint has to answer.
        package var timeoutSeconds: Int64 = 15

        package init(destination: WebhookDestination, schedule: WebhookRetrySchedule, leaseSeconds: Double) {
            self.destination = destination
            self.schedule = schedule
            self.leaseSeconds = leaseSeconds
        }
    }

    package let store: WebhookStore
    package let settings: Settings
    package let logger: Logger
    /// This process's name on the leases it takes.
    package let owner = "node-" + RandomBytes.make(8).withUnsafeBytes { Hex.encode($0) }

    package init(store: WebhookStore, settings: Settings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
    }

    /// How many deliveries one pass claims (each to its own endpoint, sent concurrently).
    static let batchSize = 16

    package func run() async throws {
        if store.engine.kind == .sqlite {
            // One node owns an SQLite file: leases left by a crash of this node are stale now.
            try? await store.releaseLeases()
        }
        var configuration = HTTPClient.Configuration()
        // A redirect could lead to an address the check did not see.
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(
            connect: .seconds(min(10, settings.timeoutSeconds)),
            read: .seconds(settings.timeoutSeconds)
        )
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            var sent = 0
            do {
                sent = try await pass(client: client)
            } catch {
                logger.warning("could not read the webhook outbox", metadata: ["error": "\(error)"])
            }
            if sent == 0 {
                try? await cancelWhenGracefulShutdown {
                    try await Task.sleep(nanoseconds: UInt64(settings.pollIntervalMilliseconds) * 1_000_000)
                }
            }
        }
        try? await client.shutdown()
    }

    /// Claims what is due and sends it; returns how many were sent.
    func pass(client: HTTPClient) async throws -> Int {
        let claimed = try await store.claim(
            owner: owner,
            leaseMilliseconds: Int64(settings.leaseSeconds * 1000),
            limit: Self.batchSize
        )
        await withTaskGroup(of: Void.self) { group in
            for delivery in claimed {
                group.addTask { await send(delivery, client: client) }
            }
        }
        return claimed.count
    }

    /// One attempt, recorded.
    func send(_ claimed: ClaimedWebhookDelivery, client: HTTPClient) async {
        let start = ContinuousClock.now
        let now = Clock.nowMilliseconds()
        let delivery = claimed.delivery
        var statusCode: Int?
        var failure: String?
        do {
            try await settings.destination.check(claimed.endpoint.url)
            let timestamp = now / 1000
            var request = HTTPClientRequest(url: claimed.endpoint.url)
            request.method = .POST
            request.headers.add(name: "content-type", value: "application/json")
            request.headers.add(name: "user-agent", value: "vane-webhooks")
            request.headers.add(name: "webhook-id", value: delivery.messageId)
            request.headers.add(name: "webhook-timestamp", value: String(timestamp))
            request.headers.add(
                name: "webhook-signature",
                value: WebhookSignature.header(
                    messageId: delivery.messageId,
                    timestamp: timestamp,
                    body: claimed.payload,
                    secrets: claimed.endpoint.signingSecrets(at: now)
                )
            )
            request.body = .bytes(ByteBuffer(string: claimed.payload))
            let response = try await client.execute(request, timeout: .seconds(settings.timeoutSeconds))
            statusCode = Int(response.status.code)
            // The answer's body is not used; read a little so the connection can be reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if !(200..<300).contains(Int(response.status.code)) {
                failure = "the endpoint answered \(response.status.code)"
            }
        } catch let refusal as WebhookDestination.Refusal {
            failure = refusal.description
        } catch {
            failure = "no answer: \(String(describing: error).prefix(300))"
        }
        let elapsed = ContinuousClock.now - start
        let attempt = WebhookAttempt(
            number: delivery.attemptCount + 1,
            time: now,
            statusCode: statusCode,
            error: failure,
            durationMilliseconds: elapsed.components.seconds * 1000 + elapsed.components.attoseconds
                / 1_000_000_000_000_000
        )
        let outcome: WebhookAttemptOutcome =
            failure == nil
            ? .delivered
            : settings.schedule.outcome(
                afterFailures: attempt.number,
                now: Clock.nowMilliseconds(),
                giveUpTime: delivery.giveUpTime
            )
        do {
            let held = try await store.record(attempt, outcome: outcome, for: delivery, owner: owner)
            if !held {
                logger.warning(
                    "a webhook delivery's lease ran out before its attempt was recorded; another node sends it again",
                    metadata: ["endpoint": "\(delivery.endpointId)", "message": "\(delivery.messageId)"]
                )
            }
        } catch {
            // The lease runs out and the delivery is sent again, with the same webhook-id.
            logger.warning(
                "could not record a webhook attempt",
                metadata: [
                    "endpoint": "\(delivery.endpointId)", "message": "\(delivery.messageId)", "error": "\(error)",
                ]
            )
        }
        if let failure {
            logger.info(
                "webhook attempt failed",
                metadata: [
                    "endpoint": "\(delivery.endpointId)", "message": "\(delivery.messageId)",
                    "attempt": "\(attempt.number)", "error": "\(failure)",
                ]
            )
        }
    }
}
