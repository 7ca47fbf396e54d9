import Foundation
import Testing
import VaneCore

@testable import Vane

/// Backoff after 429 and 5xx answers, on a manual clock (issue #28): every pause is exact, and
/// time passes only when the test says so.
@Suite struct ClientBackoffTests {
    @Test(arguments: [429, 500, 503])
    func aRetryAfterLongerThanThePolicyIsHonouredAndNothingIsSentMeanwhile(status: Int) async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "good"]),
            .status(status, headers: ["Retry-After": "600"]),
            .update(version: 2, ["banner": "after the pause"])
        )
        let client = try setup.client()
        try await client.fetchAndActivate()
        let retryAt = setup.clock.now.addingTimeInterval(600)
        await #expect(throws: VaneError.serverUnavailable(status: status, retryAt: retryAt)) {
            try await client.fetch(minimumInterval: 0)
        }
        setup.clock.advance(by: 599)
        await #expect(throws: VaneError.backingOff(retryAt: retryAt)) { try await client.fetch(minimumInterval: 0) }
        #expect(setup.transport.requests(to: .fetch).count == 2, "nothing is sent during the pause")
        #expect(client.string(forKey: "banner", default: "") == "good")

        setup.clock.advance(by: 1)
        #expect(try await client.fetch(minimumInterval: 0) == .fetched(templateVersion: 2))
    }

    @Test func aRetryAfterDateIsReadAgainstTheClock() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = setup.clock.now.addingTimeInterval(120)
        setup.transport.enqueue(.fetch, .status(503, headers: ["Retry-After": formatter.string(from: date)]))
        let client = try setup.client()
        await #expect(throws: VaneError.serverUnavailable(status: 503, retryAt: date)) { try await client.fetch() }
    }

    @Test func withoutRetryAfterThePauseDoublesUpToTheMaximumAndASuccessEndsIt() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.always(.fetch, .status(500, body: "oops"))
        let client = try setup.client { $0.backoff = BackoffPolicy(initial: 10, maximum: 35, jitter: 0) }
        for pause in [10.0, 20, 35, 35] {
            let retryAt = setup.clock.now.addingTimeInterval(pause)
            await #expect(throws: VaneError.serverUnavailable(status: 500, retryAt: retryAt)) {
                try await client.fetch(minimumInterval: 0)
            }
            setup.clock.advance(by: pause)
        }
        // A shorter Retry-After does not shorten the policy's pause.
        setup.transport.enqueue(.fetch, .update(version: 1, [:]), .status(429, headers: ["Retry-After": "1"]))
        #expect(try await client.fetch(minimumInterval: 0) == .fetched(templateVersion: 1))
        await #expect(throws: VaneError.serverUnavailable(status: 429, retryAt: setup.clock.now.addingTimeInterval(10)))
        {
            try await client.fetch(minimumInterval: 0)
        }
    }
}
