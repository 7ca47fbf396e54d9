import Foundation
import Testing
import VaneCore

@testable import Vane

/// Live updates over a scripted event stream and a manual clock (issue #28): announcements
/// fetched and applied by policy, reconnection pauses, `Last-Event-ID`, catching up through a
/// backoff, stopping.
@Suite struct ClientLiveUpdateTests {
    /// A client holding version 1 of `banner` and `layout`, its stream scripted next.
    static func connectedClient(
        _ setup: ScriptedSetup,
        stream: ScriptedStream,
        policy: LiveApplyPolicy = .allowlisted([])
    ) async throws -> VaneClient {
        setup.transport.enqueue(.fetch, .update(version: 1, ["banner": "one", "layout": "grid"], etag: "\"e1\""))
        setup.transport.enqueue(.stream, .stream(stream))
        let client = try setup.client { $0.liveUpdates.policy = policy }
        try await client.fetchAndActivate()
        client.startLiveUpdates()
        await setup.eventually { client.liveUpdateState == .connected }
        return client
    }

    @Test func anAnnouncedVersionIsFetchedAndOnlyRealtimeKeysChangeUnderTheUser() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let stream = ScriptedStream()
        let client = try await Self.connectedClient(setup, stream: stream)
        defer { client.stopLiveUpdates() }
        #expect(client.liveUpdateState == .connected)
        let request = try #require(setup.transport.requests(to: .stream).first)
        #expect(request.method == "GET")
        #expect(request.headers["Accept"] == "text/event-stream")
        #expect(request.headers["Last-Event-ID"] == "1", "the newest version the client holds")

        var updates = client.liveUpdates.makeAsyncIterator()
        setup.transport.enqueue(
            .fetch,
            .update(
                version: 2,
                ["banner": "two", "layout": "list"],
                metadata: ["banner": KeyMetadata(realtime: true)],
                etag: "\"e2\""
            )
        )
        stream.announce(2)
        let update = await updates.next()
        #expect(
            update
                == LiveUpdate(
                    templateVersion: 2,
                    updatedKeys: ["banner", "layout"],
                    appliedKeys: ["banner"],
                    pendingKeys: ["layout"]
                )
        )
        #expect(client.string(forKey: "banner", default: "") == "two", "a real-time key is applied at once")
        #expect(client.string(forKey: "layout", default: "") == "grid", "the rest waits for activate()")
        #expect(client.pendingTemplateVersion == 2)
        #expect(setup.transport.requests(to: .fetch).last?.headers["If-None-Match"] == "\"e1\"")
        client.activate()
        #expect(client.string(forKey: "layout", default: "") == "list")
    }

    static let policies: [(LiveApplyPolicy, Set<String>)] = [
        (.all, ["banner", "layout"]), (.none, []), (.allowlisted(["layout"]), ["layout"]),
    ]

    @Test(arguments: policies)
    func thePolicyDecidesWhichKeysApply(policy: LiveApplyPolicy, applied: Set<String>) async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let stream = ScriptedStream()
        let client = try await Self.connectedClient(setup, stream: stream, policy: policy)
        defer { client.stopLiveUpdates() }
        var updates = client.liveUpdates.makeAsyncIterator()
        setup.transport.enqueue(.fetch, .update(version: 2, ["banner": "two", "layout": "list"]))
        stream.announce(2)
        let update = await updates.next()
        #expect(update?.appliedKeys == applied)
        #expect(update?.pendingKeys == Set(["banner", "layout"]).subtracting(applied))
        #expect(client.string(forKey: "layout", default: "") == (applied.contains("layout") ? "list" : "grid"))
        #expect(client.pendingTemplateVersion == (applied.count == 2 ? nil : 2))
    }

    @Test func failedConnectionsAreRetriedWithGrowingPausesForever() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let stream = ScriptedStream()
        setup.transport.enqueue(
            .stream,
            .fail(.cannotConnect(reason: "the network is down")),
            .status(503),
            .fail(.timedOut(seconds: 45)),
            .stream(stream)
        )
        let client = try setup.client()
        defer { client.stopLiveUpdates() }
        client.startLiveUpdates()
        for (attempt, pause) in [1.0, 2, 4].enumerated() {
            await setup.eventually { setup.clock.pauses.count == attempt + 1 && setup.clock.sleeperCount == 1 }
            guard case .waitingToReconnect(let failures, let retryAt, let reason) = client.liveUpdateState else {
                Issue.record("after attempt \(attempt + 1): \(client.liveUpdateState)")
                return
            }
            #expect(failures == attempt + 1)
            #expect(retryAt == setup.clock.now.addingTimeInterval(pause))
            #expect(!reason.isEmpty)
            setup.clock.advance(by: pause)
        }
        await setup.eventually { client.liveUpdateState == .connected }
        #expect(client.liveUpdateState == .connected)
        #expect(setup.clock.pauses == [1, 2, 4])
        #expect(setup.transport.requests(to: .stream).count == 4)
    }

    @Test func aStreamThatEndsIsReopenedAfterTheServersRetryAndAsksForWhatItMissed() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let first = ScriptedStream()
        let client = try await Self.connectedClient(setup, stream: first, policy: .none)
        defer { client.stopLiveUpdates() }
        var updates = client.liveUpdates.makeAsyncIterator()
        setup.transport.enqueue(.fetch, .update(version: 2, ["banner": "two", "layout": "grid"]))
        first.announce(2)
        _ = await updates.next()

        let second = ScriptedStream()
        setup.transport.enqueue(.stream, .stream(second))
        first.send("retry: 5000\n\n")
        first.finish()
        await setup.eventually { setup.clock.sleeperCount == 1 }
        guard case .waitingToReconnect(1, _, let reason) = client.liveUpdateState else {
            Issue.record("\(client.liveUpdateState)")
            return
        }
        #expect(reason == "the server ended the stream")
        #expect(setup.clock.pauses == [5], "the server's retry: is longer than the policy's first pause")
        setup.clock.advance(by: 5)
        await setup.eventually { client.liveUpdateState == .connected }
        let requests = setup.transport.requests(to: .stream)
        #expect(requests.count == 2)
        #expect(requests.last?.headers["Last-Event-ID"] == "2", "the pending version counts as held")
    }

    @Test func aCatchUpWaitsOutTheServersBackoffAndDropsNoVersion() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let stream = ScriptedStream()
        let client = try await Self.connectedClient(setup, stream: stream, policy: .all)
        defer { client.stopLiveUpdates() }
        var updates = client.liveUpdates.makeAsyncIterator()
        setup.transport.enqueue(
            .fetch,
            .status(503, headers: ["Retry-After": "90"]),
            .update(version: 3, ["banner": "three", "layout": "grid"])
        )
        stream.announce(3)
        await setup.eventually { setup.clock.sleeperCount == 1 }
        #expect(setup.clock.pauses == [90])
        #expect(client.string(forKey: "banner", default: "") == "one")
        setup.clock.advance(by: 90)
        let update = await updates.next()
        #expect(update?.templateVersion == 3)
        #expect(client.string(forKey: "banner", default: "") == "three")
        #expect(setup.transport.requests(to: .fetch).count == 3)
    }

    @Test func stoppingClosesTheStreamAndPausingResumesWithACatchUp() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let first = ScriptedStream()
        let client = try await Self.connectedClient(setup, stream: first)
        client.pauseLiveUpdates()
        #expect(client.liveUpdateState == .paused)
        await setup.eventually { first.isClosed }
        #expect(first.isClosed)

        let second = ScriptedStream()
        setup.transport.enqueue(.stream, .stream(second))
        client.resumeLiveUpdates()
        await setup.eventually { client.liveUpdateState == .connected }
        client.stopLiveUpdates()
        #expect(client.liveUpdateState == .stopped)
        await setup.eventually { second.isClosed }
        #expect(second.isClosed)
        client.resumeLiveUpdates()
        #expect(client.liveUpdateState == .stopped, "resume reopens only a paused stream")
        #expect(setup.transport.requests(to: .stream).count == 2)
    }
}
