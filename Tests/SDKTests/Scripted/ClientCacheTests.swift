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

    /// Cache files of the two earlier formats ("VNC1": an FNV-1a checksum; "VNC2": `ByteHash`;
    /// neither stores the values' readings; issue #32) still start the next launch, their values
    /// read by the coercion rule; the next write replaces them with the current format, and a
    /// damaged one still falls back to the defaults.
    @Test(arguments: ["VNC1", "VNC2"])
    func aCacheWrittenInAnEarlierFormatStillLoads(magic: String) async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .notModified(etag: "\"e3\""))
        let cacheURL = setup.directory.appendingPathComponent("config.vanecache")
        try FileManager.default.createDirectory(at: setup.directory, withIntermediateDirectories: true)
        var earlier = EarlierCacheFile.file(
            magic: magic,
            version: 3,
            etag: "\"e3\"",
            entries: [("banner", "cached"), ("limit", " 5 "), ("enabled", "Yes")]
        )
        try Data(earlier).write(to: cacheURL)

        let second = try setup.client { $0.defaults = InAppDefaults(["banner": "bundled"]) }
        #expect(second.string(forKey: "banner", default: "") == "cached")
        #expect(second.int(forKey: "limit", default: 0) == 5)
        #expect(second.bool(forKey: "enabled", default: false))
        #expect(second.activeTemplateVersion == 3)
        #expect(try await second.fetch(minimumInterval: 0) == .noChange, "its ETag came back with it")
        #expect(setup.sentETags.last == "\"e3\"")
        // The fetch's own write of the cache comes first: it would replace the damaged file.
        await second.waitForPendingWrites()
        let replaced = [UInt8](try Data(contentsOf: cacheURL))
        #expect(Array(replaced[0..<4]) == ConfigCacheFile.magic, "the confirmation wrote the current format")
        #expect(
            try ConfigCacheFile(data: replaced).active?.entries == [
                "banner": "cached", "limit": " 5 ", "enabled": "Yes",
            ]
        )

        earlier[earlier.count / 2] ^= 0x20
        try Data(earlier).write(to: cacheURL)
        let damaged = try setup.client { $0.defaults = InAppDefaults(["banner": "bundled"]) }
        #expect(damaged.string(forKey: "banner", default: "") == "bundled")
        #expect(damaged.activeTemplateVersion == nil)
    }

    /// Each value's typed readings are stored beside it ("VNC3"), so a start does not read the
    /// values again, and they read back as the coercion rule reads the value. The table is the
    /// rule as it was when "VNC3" was made: a change to the rule fails here until the magic
    /// changes too, so that readings stored under the old rule are worked out again.
    @Test func storedReadingsFollowTheCoercionRule() async throws {
        let rule: [(text: String, bool: Bool?, double: Double?, int: Int?)] = [
            ("true", true, nil, nil), ("On", true, nil, nil), ("y", true, nil, nil), ("1", true, 1, 1),
            ("0", false, 0, 0), ("off", false, nil, nil), ("", false, nil, nil), (" no ", false, nil, nil),
            ("42", nil, 42, 42), ("-0.5", nil, -0.5, nil), ("1e3", nil, 1000, 1000), ("2.0", nil, 2, 2),
            ("0x10", nil, nil, nil), ("NaN", nil, nil, nil), ("1e400", nil, nil, nil),
            ("9223372036854775807", nil, 0x1p63, .max), ("café", nil, nil, nil),
            ("{\"a\": 1}", nil, nil, nil),
        ]
        let ruleChanged = "the coercion rule changed: change ConfigCacheFile.magic, then this table"
        for reading in rule {
            let expected = CoercedValue(
                stringValue: reading.text,
                boolValue: reading.bool,
                doubleValue: reading.double,
                intValue: reading.int
            )
            #expect(CoercedValue(reading.text) == expected, "\(ruleChanged): \"\(reading.text)\"")
        }

        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let entries = Dictionary(uniqueKeysWithValues: rule.enumerated().map { ("key_\($0.offset)", $0.element.text) })
        setup.transport.enqueue(.fetch, .update(version: 1, entries))
        let first = try setup.client()
        try await first.fetchAndActivate()
        await first.waitForPendingWrites()
        let file = [UInt8](try Data(contentsOf: setup.directory.appendingPathComponent("config.vanecache")))
        #expect(Array(file[0..<4]) == Array("VNC3".utf8))
        let stored = try #require(try ConfigCacheFile(data: file).active)
        #expect(stored.entries == entries)
        for position in 0..<stored.values.count {
            let key = stored.values.key(at: position)
            #expect(
                stored.values.value(at: position) == CoercedValue(entries[key] ?? "-"),
                "\(key): the readings stored are the rule's"
            )
        }
        let second = try setup.client()
        for (key, text) in entries {
            #expect(second.value(forKey: key) == ResolvedValue(CoercedValue(text), source: .remote))
        }
    }

    /// Readings that no value has (a Boolean's truth without a Boolean, an integer without a
    /// number, unknown flags) make the file unreadable, saying at which byte.
    @Test func readingsThatNoValueHasAreRefused() throws {
        let config = FetchedConfig(entries: ["k": "yes"], templateVersion: 1, fetchedAt: Date(timeIntervalSince1970: 0))
        let file = ConfigCacheFile(active: config, fetched: nil).serialized()
        // magic and checksum 12, present 1, version 8, time 8, no ETag 4, context 4, count 4,
        // "k" 5, "yes" 7: the flags byte.
        let flags = 12 + 41
        #expect(file[flags] == 0b11)
        for wrong: UInt8 in [0b10, 0b1000, 0b1_0000] {
            var damaged = file
            damaged[flags] = wrong
            var framed = Array(damaged[0..<4])
            let checksum = ConfigCacheFile.checksum(damaged[12...])
            for shift in stride(from: 0, to: 64, by: 8) {
                framed.append(UInt8(truncatingIfNeeded: checksum >> UInt64(shift)))
            }
            framed.append(contentsOf: damaged[12...])
            do throws(CacheFileError) {
                _ = try ConfigCacheFile(data: framed)
                Issue.record("flags \(wrong) were read")
            } catch {
                #expect(error.path == "byte \(flags)")
                #expect(error.message.contains("readings"), "\(error)")
            }
        }
    }

    /// A config read from the cache shows its values by key like one made from a dictionary, and
    /// setting them replaces every value.
    @Test func aCachedConfigShowsItsEntriesAndTakesNewOnes() throws {
        let made = FetchedConfig(
            entries: ["a": "1", "b": "off"],
            templateVersion: 4,
            etag: "\"e\"",
            fetchedAt: Date(timeIntervalSince1970: 10)
        )
        var read = try #require(
            try ConfigCacheFile(data: ConfigCacheFile(active: made, fetched: nil).serialized()).active
        )
        #expect(read.entries == ["a": "1", "b": "off"])
        #expect(read == made)
        #expect(read.hashValue == made.hashValue)
        read.entries["c"] = "new"
        #expect(read.entries == ["a": "1", "b": "off", "c": "new"])
        #expect(read != made)
        let resolved = ResolvedValues(overrides: [:], active: read, defaults: InAppDefaults())
        #expect(resolved["c"]?.value == "new")
        #expect(resolved["a"]?.value.intValue == 1)
    }
}

/// Cache files as the formats before "VNC3" wrote them (no readings beside the values).
enum EarlierCacheFile {
    /// A file holding one active config and no fetched one.
    static func file(magic: String, version: Int64, etag: String, entries: [(String, String)]) -> [UInt8] {
        var payload: [UInt8] = [1]
        append(UInt64(bitPattern: version), to: &payload)
        append(Double(1_800_000_000).bitPattern, to: &payload)
        append(etag, to: &payload)
        append("", to: &payload)
        append(UInt64(entries.count), bytes: 4, to: &payload)
        for (key, value) in entries {
            append(key, to: &payload)
            append(value, to: &payload)
        }
        append(0, bytes: 4, to: &payload)
        payload.append(0)
        let checksum =
            magic == "VNC1" ? ConfigCacheFile.fnvChecksum(payload) : ConfigCacheFile.checksum(payload[...])
        var file = Array(magic.utf8)
        append(checksum, to: &file)
        return file + payload
    }

    private static func append(_ value: UInt64, bytes: Int = 8, to output: inout [UInt8]) {
        for index in 0..<bytes { output.append(UInt8(truncatingIfNeeded: value >> UInt64(index * 8))) }
    }

    private static func append(_ text: String, to output: inout [UInt8]) {
        append(UInt64(text.utf8.count), bytes: 4, to: &output)
        output.append(contentsOf: text.utf8)
    }
}
