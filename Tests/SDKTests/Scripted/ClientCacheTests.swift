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

    /// The cache file of the first format ("VNC1", an FNV-1a checksum; issue #32 changed the
    /// checksum) still starts the next launch, and a damaged one still falls back to the defaults.
    @Test func aCacheWrittenInTheFirstFormatStillLoads() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 3, ["banner": "cached", "limit": "5"], etag: "\"e3\""),
            .notModified(etag: "\"e3\"")
        )
        let first = try setup.client()
        try await first.fetchAndActivate()
        await first.waitForPendingWrites()
        let cacheURL = setup.directory.appendingPathComponent("config.vanecache")
        let current = [UInt8](try Data(contentsOf: cacheURL))
        #expect(Array(current[0..<4]) == Array("VNC2".utf8))
        let payload = current[12...]
        var legacy = Array("VNC1".utf8)
        let checksum = ConfigCacheFile.fnvChecksum(payload)
        for shift in stride(from: 0, to: 64, by: 8) {
            legacy.append(UInt8(truncatingIfNeeded: checksum >> UInt64(shift)))
        }
        legacy.append(contentsOf: payload)
        try Data(legacy).write(to: cacheURL)

        let second = try setup.client { $0.defaults = InAppDefaults(["banner": "bundled"]) }
        #expect(second.string(forKey: "banner", default: "") == "cached")
        #expect(second.int(forKey: "limit", default: 0) == 5)
        #expect(second.activeTemplateVersion == 3)
        #expect(try await second.fetch(minimumInterval: 0) == .noChange, "its ETag came back with it")
        #expect(setup.sentETags.last == "\"e3\"")

        legacy[legacy.count / 2] ^= 0x20
        try Data(legacy).write(to: cacheURL)
        let damaged = try setup.client { $0.defaults = InAppDefaults(["banner": "bundled"]) }
        #expect(damaged.string(forKey: "banner", default: "") == "bundled")
        #expect(damaged.activeTemplateVersion == nil)
    }
}
