import Testing

@testable import VaneServerCore

/// The pure rules of webhook delivery: Standard Webhooks' signature, which addresses are public,
/// and the retry schedule.
@Suite struct WebhookDeliveryRulesTests {
    /// The example of the Standard Webhooks reference libraries' tests.
    @Test func theSignatureIsStandardWebhooksHMACOfIdTimestampAndBody() {
        let header = WebhookSignature.header(
            messageId: "msg_p5jXN8AQM9LWM0D4loKWxJek",
            timestamp: 1_614_265_330,
            body: #"{"test": 2432232314}"#,
            secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]
        )
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func whileASecretRotatesBothSign() {
        let old = WebhookSignature.generateSecret()
        let new = WebhookSignature.generateSecret()
        let both = WebhookSignature.header(messageId: "msg_1", timestamp: 1, body: "{}", secrets: [new, old])
        let parts = both.split(separator: " ").map(String.init)
        #expect(parts.count == 2)
        #expect(parts[0] == WebhookSignature.header(messageId: "msg_1", timestamp: 1, body: "{}", secrets: [new]))
        #expect(parts[1] == WebhookSignature.header(messageId: "msg_1", timestamp: 1, body: "{}", secrets: [old]))
    }

    @Test(arguments: [
        ("8.8.8.8", true), ("1.1.1.1", true), ("2606:4700:4700::1111", true), ("::ffff:8.8.8.8", true),
        ("127.0.0.1", false), ("127.255.0.1", false), ("10.1.2.3", false), ("172.31.255.255", false),
        ("172.32.0.1", true), ("192.168.0.1", false), ("169.254.169.254", false), ("100.64.0.1", false),
        ("0.0.0.0", false), ("224.0.0.1", false), ("255.255.255.255", false), ("198.18.0.1", false),
        ("::1", false), ("::", false), ("::ffff:127.0.0.1", false), ("::ffff:10.0.0.1", false),
        ("::127.0.0.1", false), ("fe80::1", false), ("fd12:3456::1", false), ("ff02::1", false),
        ("64:ff9b::7f00:1", false), ("2002:7f00:1::", false), ("2001:db8::1", false), ("not an address", false),
    ])
    func onlyPublicUnicastAddressesArePublic(address: String, isPublic: Bool) {
        #expect(WebhookDestination.isPublic(address) == isPublic)
    }

    @Test func retriesBackOffExponentiallyWithJitterUntilTheyGiveUp() {
        let schedule = WebhookRetrySchedule(firstDelaySeconds: 5)
        #expect((1...5).map { schedule.baseDelaySeconds(afterFailures: $0) } == [5, 10, 20, 40, 80])
        #expect(schedule.baseDelaySeconds(afterFailures: 30) == 6 * 3600, "capped at 6 hours")
        let now: Int64 = 1_000_000
        let giveUp = now + WebhookStore.retryWindowMilliseconds
        #expect(schedule.outcome(afterFailures: 2, now: now, giveUpTime: giveUp, jitter: 0.8) == .retry(at: now + 8000))
        #expect(
            schedule.outcome(afterFailures: 2, now: now, giveUpTime: giveUp, jitter: 1.2) == .retry(at: now + 12000)
        )
        #expect(
            schedule.outcome(afterFailures: 30, now: giveUp - 1000, giveUpTime: giveUp, jitter: 1)
                == .retry(at: giveUp),
            "the last attempt is made at the give-up time"
        )
        #expect(schedule.outcome(afterFailures: 31, now: giveUp, giveUpTime: giveUp, jitter: 1) == .gaveUp)
        // Over 3 days from a 5 s start: attempts keep coming, at most 6 hours apart.
        var time = now
        var failures: Int64 = 0
        while case .retry(let next) = schedule.outcome(
            afterFailures: failures + 1,
            now: time,
            giveUpTime: giveUp,
            jitter: 1
        ) {
            #expect(next - time <= 6 * 3_600_000)
            time = next
            failures += 1
        }
        #expect(time == giveUp && (20...30).contains(failures), "\(failures) retries")
    }
}
