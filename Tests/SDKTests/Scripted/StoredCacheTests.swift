import Foundation
import Testing
import VaneCore

@testable import Vane

/// The cache read in place (issue #32, SDK start): the keys hashed where they are in the file's
/// bytes, each value made on its key's first read. A start from it must answer every read
/// as a start from the values made in memory does.
@Suite struct StoredCacheTests {
    /// Keys that are not ASCII (in either spelling), an empty key, empty values, long keys and
    /// 3,000 generated ones, with defaults and overrides on top.
    static let entries: [String: String] = {
        var entries: [String: String] = [
            "caf\u{E9}": "1", "Key": "", "": "the empty key", "k": "{\"a\": 1}",
            "a_much_longer_key_name_for_the_checkout_flow": " yes ", "\u{1F680}_launch": "42",
        ]
        for index in 0..<3000 { entries["key_\(index)"] = index % 2 == 0 ? "true" : "off" }
        return entries
    }()
    static let defaults = InAppDefaults(["key_1": "ignored", "only_default": "d", "caf\u{E9}": "ignored"])
    static let overrides = ["key_2": "overridden", "only_override": "o", "cafe\u{301}": "local"]

    static func storedConfig(_ entries: [String: String]) throws -> FetchedConfig {
        let made = FetchedConfig(entries: entries, templateVersion: 7, fetchedAt: Date(timeIntervalSince1970: 5))
        let file = ConfigCacheFile(active: made, fetched: nil).serialized()
        return try #require(try ConfigCacheFile(data: file).active)
    }

    @Test func aStoredCacheAnswersEveryReadAsValuesMadeInMemoryDo() throws {
        let stored = try Self.storedConfig(Self.entries)
        guard case .stored = stored.values.storage else {
            Issue.record("a VNC3 file's values are left in its bytes")
            return
        }
        let made = FetchedConfig(entries: Self.entries, templateVersion: 7, fetchedAt: Date(timeIntervalSince1970: 5))
        #expect(stored == made)
        var fromFile = ResolvedValues(overrides: Self.overrides, active: stored, defaults: Self.defaults)
        let inMemory = ResolvedValues(overrides: Self.overrides, active: made, defaults: Self.defaults)
        #expect(fromFile.keys.sorted() == inMemory.keys.sorted())
        let spellings = ["cafe\u{301}", "\u{212A}ey", "key", "missing", "key_3000", "only_default", "only_override"]
        for key in Self.entries.keys.sorted() + spellings {
            #expect(fromFile[key] == inMemory[key], "\(key)")
            if let position = fromFile.table.position(of: key) {
                #expect(fromFile.value(at: position) == inMemory[key], "\(key), made by the read and kept")
            }
        }
        #expect(fromFile["caf\u{E9}"] == ResolvedValue(CoercedValue("local"), source: .override))
        #expect(fromFile["\u{212A}ey"] == ResolvedValue(CoercedValue(""), source: .remote))
        #expect(fromFile["key_1"] == ResolvedValue(CoercedValue("off"), source: .remote))
        #expect(fromFile["only_default"]?.source == .default)
        #expect(ResolvedValues.changedKeys(from: fromFile, to: inMemory).isEmpty)
    }

    /// A start makes no value: each is made by its key's first read and kept there; a snapshot
    /// makes them all first, so that it and the client never write to a table they share.
    @Test func aValueIsMadeByItsKeysFirstRead() async throws {
        let stored = try Self.storedConfig(["a": "1", "b": "off", "c": ""])
        var resolved = ResolvedValues(overrides: [:], active: stored, defaults: InAppDefaults())
        let positions = try ["a", "b", "c"].map { try #require(resolved.table.position(of: $0)) }
        for position in positions { #expect(resolved.table.value(at: position) < 0, "not made at start") }
        #expect(resolved.peek(at: positions[0]) == ResolvedValue(CoercedValue("1"), source: .remote))
        #expect(resolved.table.value(at: positions[0]) < 0, "a look without keeping")
        #expect(resolved.value(at: positions[1]) == ResolvedValue(CoercedValue("off"), source: .remote))
        #expect(resolved.table.value(at: positions[1]) >= 0, "kept")
        #expect(resolved.value(at: positions[1]) == ResolvedValue(CoercedValue("off"), source: .remote))
        #expect(resolved.table.value(at: positions[2]) < 0)
        resolved.makeAll()
        for position in positions { #expect(resolved.table.value(at: position) >= 0) }
        #expect(resolved.peek(at: positions[2]) == ResolvedValue(CoercedValue(""), source: .remote))

        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .update(version: 1, Self.entries))
        let first = try setup.client()
        try await first.fetchAndActivate()
        await first.waitForPendingWrites()
        let second = try setup.client()
        #expect(second.bool(forKey: "key_0", default: false))
        let snapshot = second.snapshot()
        for (key, text) in Self.entries {
            let expected = ResolvedValue(CoercedValue(text), source: .remote)
            #expect(snapshot.value(forKey: key) == expected, "\(key)")
            #expect(second.value(forKey: key) == expected, "\(key)")
        }
        #expect(second.keys == Self.entries.keys.sorted())
    }

    @Test func aConfigWithoutValuesLoads() throws {
        let stored = try Self.storedConfig([:])
        #expect(stored.entries.isEmpty)
        #expect(stored.templateVersion == 7)
        let resolved = ResolvedValues(overrides: ["o": "1"], active: stored, defaults: InAppDefaults(["d": "2"]))
        #expect(resolved.keys.sorted() == ["d", "o"])
        #expect(resolved["d"] == ResolvedValue(CoercedValue("2"), source: .default))
    }

    /// A damaged file starts the client from the defaults; a file whose checksum holds but whose
    /// entries do not (an ASCII key twice, an entry cut short) is refused, saying where.
    @Test func aDamagedStoredCacheFallsBackToTheDefaults() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .update(version: 3, ["banner": "cached"]))
        let first = try setup.client()
        try await first.fetchAndActivate()
        await first.waitForPendingWrites()
        let cacheURL = setup.directory.appendingPathComponent("config.vanecache")
        var file = [UInt8](try Data(contentsOf: cacheURL))
        #expect(Array(file[0..<4]) == Array("VNC3".utf8))
        #expect(try setup.client().string(forKey: "banner", default: "") == "cached")
        file[file.count - 10] ^= 0x01
        try Data(file).write(to: cacheURL)
        let damaged = try setup.client { $0.defaults = InAppDefaults(["banner": "bundled"]) }
        #expect(damaged.string(forKey: "banner", default: "") == "bundled")
        #expect(damaged.activeTemplateVersion == nil)

        // Two entries, the second a copy of the first: "k" twice.
        let config = FetchedConfig(entries: ["k": "v"], templateVersion: 1, fetchedAt: Date(timeIntervalSince1970: 0))
        let one = ConfigCacheFile(active: config, fetched: nil).serialized()
        // magic and checksum 12, present 1, version 8, time 8, no ETag 4, context 4: the count.
        let count = 12 + 25
        // The entry: "k" 5, "v" 5, flags 1; then no metadata (4) and no fetched config (1).
        let entry = Array(one[(count + 4)..<(count + 4 + 11)])
        var twice = Array(one[12..<count]) + [2, 0, 0, 0] + entry + entry + [0, 0, 0, 0, 0]
        #expect(throws: CacheFileError(path: "byte \(count + 4)", message: "a key repeats among the config's entries"))
        {
            _ = try ConfigCacheFile(data: Self.framed(twice))
        }
        twice = Array(one[12..<count]) + [1, 0, 0, 0] + entry.dropLast(3)
        do throws(CacheFileError) {
            _ = try ConfigCacheFile(data: Self.framed(twice))
            Issue.record("an entry cut short was read")
        } catch {
            #expect(error.message.contains("ends early"), "\(error)")
        }
    }

    /// A `"VNC3"` payload with its magic and checksum.
    static func framed(_ payload: [UInt8]) -> [UInt8] {
        var file = Array("VNC3".utf8)
        let checksum = ConfigCacheFile.checksum(payload[...])
        for shift in stride(from: 0, to: 64, by: 8) {
            file.append(UInt8(truncatingIfNeeded: checksum >> UInt64(shift)))
        }
        return file + payload
    }
}
