/// Where a project's changes are delivered (docs/WEBHOOKS.md).
package struct WebhookEndpoint: Sendable, Hashable {
    /// `ep_` and 24 hex characters.
    package var id: String
    package var projectId: String
    /// An `https://` or `http://` URL whose host resolves to public addresses only (unless the
    /// server allows private ones).
    package var url: String
    package var description: String
    /// The events it receives.
    package var events: [WebhookEventType]
    /// `whsec_` and the base64 of 32 random bytes.
    package var secret: String
    /// The secret before the last rotation, still signing beside ``secret`` until
    /// ``previousSecretExpiry``.
    package var previousSecret: String?
    package var previousSecretExpiry: Int64?
    /// A disabled endpoint receives nothing: no deliveries are recorded for it, and those already
    /// recorded wait until it is enabled again.
    package var enabled: Bool
    package var createTime: Int64
    package var updateTime: Int64

    /// The secrets that sign a delivery at `now`: the current one, and the previous one during
    /// its grace period.
    package func signingSecrets(at now: Int64) -> [String] {
        guard let previousSecret, let previousSecretExpiry, now < previousSecretExpiry else { return [secret] }
        return [secret, previousSecret]
    }
}

/// Where a delivery stands.
package enum WebhookDeliveryStatus: String, Sendable, Hashable, CaseIterable {
    /// Not yet answered with a 2xx; tried again with backoff until its give-up time.
    case pending
    /// An attempt was answered with a 2xx.
    case delivered
    /// Every attempt failed until its give-up time (3 days after it was recorded).
    case failed
}

/// One attempt to deliver a message to an endpoint.
package struct WebhookAttempt: Sendable, Hashable {
    /// From 1.
    package var number: Int64
    package var time: Int64
    /// The endpoint's HTTP status; nil when no answer came (refused, timed out, blocked address).
    package var statusCode: Int?
    /// Why it failed; nil for a 2xx.
    package var error: String?
    package var durationMilliseconds: Int64
}

/// One message for one endpoint, with its last attempt.
package struct WebhookDelivery: Sendable, Hashable {
    package var endpointId: String
    /// The endpoint's delivery order.
    package var sequence: Int64
    /// The message id: the `webhook-id` header of every attempt.
    package var messageId: String
    package var eventType: String
    package var environmentId: String
    package var versionNumber: Int64
    package var status: WebhookDeliveryStatus
    package var attemptCount: Int64
    package var nextAttemptTime: Int64
    package var giveUpTime: Int64
    package var createTime: Int64
    package var lastAttempt: WebhookAttempt?
}

/// A delivery this node holds the lease of, with what it needs to send it.
package struct ClaimedWebhookDelivery: Sendable {
    package var delivery: WebhookDelivery
    package var endpoint: WebhookEndpoint
    /// The body, exactly as stored.
    package var payload: String
}

/// How an attempt ended, for the delivery's next state.
package enum WebhookAttemptOutcome: Sendable, Hashable {
    case delivered
    /// Failed; try again at this time.
    case retry(at: Int64)
    /// Failed for the last time.
    case gaveUp
}
