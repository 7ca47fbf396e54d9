import Foundation
import Testing
import VaneCore

@testable import Vane

/// The event queue over a scripted transport and a manual clock (issue #28): batches, the timers
/// that send them, retries that keep every event, the queue's bound, and exposures.
@Suite struct ClientEventTests {
    /// The events of each `POST …/events` request, as the server reads them.
    static func batches(_ setup: ScriptedSetup) throws -> [[JSONObject]] {
        try setup.transport.requests(to: .events).map { request in
            let body = try JSONValue.parse(Array(request.body ?? Data())).objectValue
            return (body?["events"]?.arrayValue ?? []).compactMap(\.objectValue)
        }
    }

    static let accepted = ScriptedAnswer.status(200, body: #"{"accepted":1}"#)

    @Test func aFlushSendsTheQueueOldestFirstInBatches() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.always(.events, Self.accepted)
        let client = try setup.client { $0.events = EventOptions(batchSize: 2, flushInterval: 0) }
        // A full batch is sent without a flush; what the last one leaves waits for it.
        for index in 0..<5 { client.track("step", value: Double(index), properties: ["n": "\(index)"]) }
        await setup.eventually { client.queuedEventCount <= 1 }
        try await client.flush()
        #expect(client.queuedEventCount == 0)

        let batches = try Self.batches(setup)
        #expect(batches.allSatisfy { !$0.isEmpty && $0.count <= 2 }, "\(batches.map(\.count))")
        let events = batches.flatMap { $0 }
        #expect(events.compactMap { $0["value"]?.numberValue?.value } == [0, 1, 2, 3, 4], "each once, in order")
        let first = try #require(events.first)
        #expect(first["type"] == "metric")
        #expect(first["name"] == "step")
        #expect(first["unit"]?.stringValue == client.installationId)
        #expect(first["time"]?.stringValue == ISO8601Timestamp.string(milliseconds: 1_800_000_000_000))
        #expect(first["properties"]?.objectValue?["n"] == "0")
        let request = try #require(setup.transport.requests(to: .events).first)
        #expect(request.url.path == "/v1/projects/shop/environments/prod/events")
        #expect(request.headers["Authorization"] == "Bearer vane_client_secret")
    }

    @Test func theFlushIntervalSendsWaitingEventsWithoutAFlush() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.always(.events, Self.accepted)
        let client = try setup.client { $0.events = EventOptions(flushInterval: 30) }
        client.track("checkout_completed", value: 1, properties: [:])
        // Two timers: the file's write (1 s) and the send (30 s).
        await setup.eventually { setup.clock.sleeperCount == 2 }
        setup.clock.advance(by: 29)
        #expect(setup.transport.requests(to: .events).isEmpty)
        #expect(client.queuedEventCount == 1)
        setup.clock.advance(by: 1)
        await setup.eventually { client.queuedEventCount == 0 }
        #expect(setup.transport.requests(to: .events).count == 1)
    }

    @Test func aFailedSendKeepsTheEventsAndTheTimerRetriesAfterTheBackoff() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.events, .status(503))
        setup.transport.always(.events, Self.accepted)
        let client = try setup.client {
            $0.events = EventOptions(flushInterval: 30)
            $0.backoff = BackoffPolicy(initial: 60, maximum: 600, jitter: 0)
        }
        client.track("checkout_completed", value: 1, properties: [:])
        await setup.eventually { setup.clock.sleeperCount == 2 }
        setup.clock.advance(by: 30)  // t = 30: the send answers 503, sending pauses until t = 90
        await setup.eventually { setup.clock.pauses.count == 3 && setup.clock.sleeperCount == 1 }
        #expect(client.queuedEventCount == 1)
        setup.clock.advance(by: 30)  // t = 60: still backing off, nothing is sent
        await setup.eventually { setup.clock.pauses.count == 4 && setup.clock.sleeperCount == 1 }
        #expect(setup.transport.requests(to: .events).count == 1)
        setup.clock.advance(by: 30)  // t = 90: sent
        await setup.eventually { client.queuedEventCount == 0 }

        let batches = try Self.batches(setup)
        try #require(batches.count == 2)
        #expect(batches[0].map { $0["id"] } == batches[1].map { $0["id"] }, "the retry has the same ids")
    }

    @Test func eventsWaitWhileOfflineOrRefusedByKeyAndABatchRefusedForGoodLeaves() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let envelope = #"{"error":{"code":400,"message":"events[0].name: too long","status":"INVALID_ARGUMENT"}}"#
        setup.transport.enqueue(
            .events,
            .fail(.cannotConnect(reason: "offline")),
            .status(401, body: #"{"error":{"code":401,"message":"revoked","status":"UNAUTHENTICATED"}}"#),
            .status(400, body: envelope)
        )
        let client = try setup.client()
        client.track("checkout_completed", value: 1, properties: [:])
        await #expect(throws: VaneError.transport(.cannotConnect(reason: "offline"))) { try await client.flush() }
        #expect(client.queuedEventCount == 1, "offline: no backoff, the events wait")
        await #expect(throws: VaneError.rejected(status: 401, message: "revoked")) { try await client.flush() }
        #expect(client.queuedEventCount == 1, "a refused key: the events wait for a fixed configuration")
        await #expect(throws: VaneError.rejected(status: 400, message: "events[0].name: too long")) {
            try await client.flush()
        }
        #expect(client.queuedEventCount == 0, "a batch refused for good would stop every later event")
    }

    @Test func eventsTheServerRefusesOneByOneLeaveTheQueue() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .events,
            .status(
                200,
                body: #"{"accepted":1,"rejected":[{"path":"$.events[1]","message":"experiment stopped"}]}"#
            )
        )
        let client = try setup.client()
        client.track("a", value: nil, properties: [:])
        client.track("b", value: nil, properties: [:])
        try await client.flush()
        #expect(client.queuedEventCount == 0)
        try await client.flush()
        #expect(setup.transport.requests(to: .events).count == 1, "an empty queue sends nothing")
    }

    @Test func aFullQueueDropsTheOldestAndCountsThem() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.always(.events, Self.accepted)
        let client = try setup.client { $0.events = EventOptions(maximumQueuedEvents: 3, flushInterval: 0) }
        for index in 0..<5 { client.track("step", value: Double(index), properties: [:]) }
        #expect(client.queuedEventCount == 3)
        #expect(client.droppedEventCount == 2)
        try await client.flush()
        let values = try Self.batches(setup).flatMap { $0 }.compactMap { $0["value"]?.numberValue?.value }
        #expect(values == [2, 3, 4], "the newest, oldest first")
        await client.waitForPendingWrites()
        #expect(try setup.client().droppedEventCount == 2, "the count survives a launch")
    }

    @Test func theFirstReadOfAnExperimentKeyRecordsOneExposure() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let assignment = ExperimentAssignment(experiment: "checkout-test", variant: "one_page")
        setup.transport.enqueue(
            .fetch,
            .update(
                version: 4,
                ["checkout": "one_page", "banner": "hi"],
                metadata: ["checkout": KeyMetadata(experiment: assignment)]
            )
        )
        setup.transport.always(.events, Self.accepted)
        let seen = LockedValue<[Exposure]>([])
        let client = try setup.client {
            $0.events = EventOptions(
                flushInterval: 0,
                onExposure: { exposure in seen.withLockedValue { $0.append(exposure) } }
            )
        }
        try await client.fetchAndActivate()
        _ = client.string(forKey: "banner", default: "")
        #expect(client.queuedEventCount == 0, "a key outside the experiment records nothing")
        setup.clock.advance(by: 5)
        _ = client.string(forKey: "checkout", default: "")
        _ = client.string(forKey: "checkout", default: "")
        _ = client.snapshot().string(forKey: "checkout", default: "")
        #expect(client.queuedEventCount == 1)
        let exposure = try #require(seen.withLockedValue { $0 }.first)
        #expect(seen.withLockedValue { $0 }.count == 1)
        #expect(exposure.unit == client.installationId)
        #expect(exposure.time == setup.clock.now)

        try await client.flush()
        let sent = try #require(try Self.batches(setup).first?.first)
        #expect(sent["type"] == "exposure")
        #expect(sent["experiment"] == "checkout-test")
        #expect(sent["variant"] == "one_page")
        #expect(sent["flagKey"] == "checkout")
        #expect(sent["templateVersion"] == "4")
        #expect(sent["time"]?.stringValue == ISO8601Timestamp.string(milliseconds: 1_800_000_005_000))
    }

    /// An experiment key no source has a value for is exposed by its first read all the same, as
    /// before issue #32 found exposures by the key's place in the read table (this key has none).
    @Test func anExperimentKeyWithoutAValueIsExposedByItsFirstRead() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let assignment = ExperimentAssignment(experiment: "layout-test", variant: "control")
        setup.transport.enqueue(
            .fetch,
            .update(version: 2, ["banner": "hi"], metadata: ["layout": KeyMetadata(experiment: assignment)])
        )
        let client = try setup.client { $0.events = EventOptions(flushInterval: 0) }
        try await client.fetchAndActivate()
        #expect(client.string(forKey: "layout", default: "app default") == "app default")
        _ = client.string(forKey: "layout", default: "")
        _ = client.string(forKey: "banner", default: "")
        #expect(client.queuedEventCount == 1)
    }
}
