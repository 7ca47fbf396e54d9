import Foundation
import Testing
import VaneCore

@testable import Vane

/// The cache a client writes and the next launch reads (real files in a temporary folder), over a
/// scripted transport (issue #28).
@Suite struct ClientCacheTests {
    @Test func theNextLaunchStartsFromTheActiveValuesWithThePendingOnesStillWaiting() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "one"], metadata: ["banner": KeyMetadata(title: "Banner")], etag: "\"e1\""),
            .update(version: 2, ["banner": "two"], etag: "\"e2\""),
            .notModified(etag: "\"e2\"")
        )
        let first = try setup.client()
        try await first.fetchAndActivate()
        try await first.fetch(minimumInterval: 0)
        await first.waitForPendingWrites()

        let second = try setup.client()
        #expect(second.installationId == first.installationId)
        #expect(second.string(forKey: "banner", default: "") == "one", "the active values, not the pending ones")
        #expect(second.metadata(forKey: "banner")?.title == "Banner")
        #expect(second.activeTemplateVersion == 1)
        #expect(second.pendingTemplateVersion == 2)
        #expect(try await second.fetch(minimumInterval: 0) == .noChange)
        #expect(setup.sentETags.last == "\"e2\"", "the pending values' ETag came back with them")
        #expect(second.activate())
        #expect(second.string(forKey: "banner", default: "") == "two")
    }

    @Test func theNextLaunchKeepsTheIntervalOfTheLastFetch() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .update(version: 1, ["banner": "one"]))
        let start = setup.clock.now
        let first = try setup.client { $0.minimumFetchInterval = 3600 }
        try await first.fetchAndActivate()
        await first.waitForPendingWrites()

        setup.clock.advance(by: 60)
        let second = try setup.client { $0.minimumFetchInterval = 3600 }
        #expect(try await second.fetch() == .notDue(nextFetchAt: start.addingTimeInterval(3600)))
        #expect(setup.transport.requests(to: .fetch).count == 1)
    }

    @Test func aConfirmationIsWrittenTooSoTheNextLaunchSendsTheNewETag() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "one"], etag: "\"e1\""),
            .notModified(etag: "\"e1b\""),
            .notModified(etag: "\"e1b\"")
        )
        let first = try setup.client()
        try await first.fetchAndActivate()
        try await first.fetch(minimumInterval: 0)
        await first.waitForPendingWrites()
        #expect(try await setup.client().fetch(minimumInterval: 0) == .noChange)
        #expect(setup.sentETags == [nil, "\"e1\"", "\"e1b\""])
    }

    @Test func overridesAreKeptApartFromTheFetchedValues() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .update(version: 1, ["banner": "remote", "theme": "blue"]))
        let first = try setup.client()
        try await first.fetchAndActivate()
        first.setOverride("local", forKey: "banner")
        await first.waitForPendingWrites()

        let second = try setup.client()
        #expect(second.value(forKey: "banner")?.source == .override)
        #expect(second.string(forKey: "banner", default: "") == "local")
        #expect(second.string(forKey: "theme", default: "") == "blue")
        second.removeOverride(forKey: "banner")
        #expect(second.string(forKey: "banner", default: "") == "remote")
    }

    @Test func withoutAFolderTheClientKeepsNothing() async throws {
        let setup = ScriptedSetup()
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "one"], etag: "\"e1\""),
            .update(version: 1, [:])
        )
        let memoryOnly = try DeviceStorageTests.client(.inMemory, transport: setup.transport) {
            $0.clock = setup.clock.sdkClock
        }
        try await memoryOnly.fetchAndActivate()
        await memoryOnly.waitForPendingWrites()
        let next = try DeviceStorageTests.client(.inMemory, transport: setup.transport)
        #expect(next.value(forKey: "banner") == nil)
        try await next.fetch()
        #expect(setup.sentETags == [nil, nil], "no ETag without its values")
    }
}
