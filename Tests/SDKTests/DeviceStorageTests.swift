import Foundation
import Testing
import VaneCore

@testable import Vane

/// A client's files on a device: files that cannot be read before the first unlock, an App Group
/// shared with extensions, tvOS purging the storage (issue #34). Real files in a temporary folder;
/// the platform facts are injected.
@Suite struct DeviceStorageTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("vane-device-\(UUID().uuidString)")
    }

    /// A client of the `shop/prod` environment on `storage`; the server is never reached unless
    /// `transport` answers for it. `configure` changes anything else (a clock, the backoff…).
    static func client(
        _ storage: StorageLocation,
        platform: StoragePlatform = StoragePlatform.current,
        transport: any HTTPTransport = ScriptedTransport(TransportResponse(status: 503, headers: [:], body: Data())),
        flushInterval: TimeInterval = 0,
        configure: (inout VaneClient.Configuration) -> Void = { _ in }
    ) throws -> VaneClient {
        var configuration = VaneClient.Configuration(
            serverURL: try #require(URL(string: "http://127.0.0.1:9")),
            project: "shop",
            environment: "prod",
            clientKey: "vane_client_secret",
            context: ClientContext(),
            storage: storage,
            events: EventOptions(flushInterval: flushInterval),
            transport: transport
        )
        configure(&configuration)
        return VaneClient(configuration: configuration, platform: platform)
    }

    /// Makes `name` unreadable but present, as a data-protected file is before the first unlock:
    /// a folder where the file should be (reading it fails, as EPERM does; tests run as root, so
    /// permissions would not stop them).
    static func lock(_ name: String, in directory: URL) throws {
        let url = directory.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    @Test func filesThatCannotBeReadYetAreNeitherMissingNorOverwrittenAndAreReadAfterTheUnlock() async throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Last launch: an installation id, an override, a queued event.
        let before = try Self.client(.directory(directory))
        before.setOverride("true", forKey: "new_checkout")
        before.track("checkout_completed", value: 1, properties: [:])
        await #expect(throws: VaneError.self) { try await before.flush() }  // 503: written, not sent
        before.waitForWrites()
        let storedId = before.installationId
        var saved: [String: Data] = [:]
        for name in ["installation-id", "overrides.json", "events.json"] {
            saved[name] = try Data(contentsOf: directory.appendingPathComponent(name))
            try Self.lock(name, in: directory)
        }

        // A launch before the first unlock (prewarming, a silent push).
        let locked = try Self.client(.directory(directory))
        #expect(locked.installationId != storedId, "a provisional id, never stored")
        #expect(locked.overrides.isEmpty)
        locked.track("opened_in_background", value: nil, properties: [:])
        #expect(locked.queuedEventCount == 0, "nothing recorded for the provisional id; the stored queue not read yet")
        locked.setOverride("blue", forKey: "theme")
        try await locked.flush()  // nothing to send, and still nothing readable
        locked.waitForWrites()
        for name in ["installation-id", "overrides.json", "events.json"] {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(
                atPath: directory.appendingPathComponent(name).path,
                isDirectory: &isFolder
            )
            #expect(isFolder.boolValue, "\(name) was not written over")
        }

        // The unlock: the files are readable again; the next flush reads them.
        for (name, data) in saved {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            try data.write(to: directory.appendingPathComponent(name))
        }
        await #expect(throws: VaneError.self) { try await locked.flush() }
        locked.waitForWrites()
        #expect(locked.installationId == storedId)
        #expect(locked.overrides == ["new_checkout": "true", "theme": "blue"])
        #expect(locked.queuedEventCount == 1, "the stored event; none was recorded for the provisional id")
        let relaunched = try Self.client(.directory(directory))
        #expect(relaunched.installationId == storedId)
        #expect(relaunched.overrides == ["new_checkout": "true", "theme": "blue"])
        #expect(relaunched.queuedEventCount == 1)
    }

    @Test func anAppAndItsWidgetInOneAppGroupAreOneUnitWithFilesApart() throws {
        let container = Self.folder()
        defer { try? FileManager.default.removeItem(at: container) }
        func facts(_ bundle: String) -> StoragePlatform {
            var facts = StoragePlatform.current
            facts.bundleIdentifier = bundle
            facts.appGroupContainer = { $0 == "group.shop" ? container : nil }
            return facts
        }
        let app = try Self.client(.appGroup("group.shop"), platform: facts("com.example.shop"))
        let widget = try Self.client(.appGroup("group.shop"), platform: facts("com.example.shop.widget"))
        #expect(app.installationId == widget.installationId)
        app.setOverride("true", forKey: "new_checkout")
        app.waitForWrites()
        #expect(widget.overrides.isEmpty, "each process keeps its own overrides")
        let appFiles = try #require(app.files)
        let widgetFiles = try #require(widget.files)
        #expect(appFiles.directory != widgetFiles.directory)
        #expect(appFiles.installationIdURL == widgetFiles.installationIdURL)
        #expect(try Self.client(.appGroup("group.shop"), platform: facts("com.example.shop")).overrides.count == 1)
    }

    @Test func aMissingAppGroupFallsBackToTheAppsOwnStorage() throws {
        let support = Self.folder()
        defer { try? FileManager.default.removeItem(at: support) }
        var facts = StoragePlatform.current
        facts.platform = .iOS
        facts.applicationSupport = support
        facts.appGroupContainer = { _ in nil }
        let client = try Self.client(.appGroup("group.missing"), platform: facts)
        #expect(client.files?.directory.path == support.appendingPathComponent("Vane/shop/prod").path)
    }

    @Test func tvOSGetsItsInstallationIdBackAfterThePurge() throws {
        let caches = Self.folder()
        let suite = "vane-tests-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(at: caches)
            UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
        }
        var facts = StoragePlatform.current
        facts.platform = .tvOS
        facts.appGroupContainer = { $0 == suite ? caches : nil }
        let first = try Self.client(.appGroup(suite), platform: facts)
        first.waitForWrites()
        try FileManager.default.removeItem(at: caches)  // the system purged the caches
        let second = try Self.client(.appGroup(suite), platform: facts)
        #expect(second.installationId == first.installationId)
        #expect(FileManager.default.fileExists(atPath: try #require(second.files).installationIdURL.path))
    }

    @Test func theInstallationIdIsCreatedOnceEvenWhenTwoProcessesRace() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("installation-id")
        #expect(try AtomicFile.create(Array("first".utf8), at: url))
        #expect(try !AtomicFile.create(Array("second".utf8), at: url))
        #expect(try AtomicFile.read(url) == Array("first".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["installation-id"])
    }

    /// A file is read whole in one read sized by its length; an empty one is empty, and one longer
    /// than its stated length (a file that grew since, or one of /proc, which states 0) whole too.
    @Test func aFileIsReadWholeWhateverItsStatedLength() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("config.vanecache")
        for count in [0, 1, 4095, 4096, 70_000] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try Data(bytes).write(to: url)
            #expect(try AtomicFile.read(url) == bytes, "\(count) bytes")
        }
        #if os(Linux)
        let status = try #require(try AtomicFile.read(URL(fileURLWithPath: "/proc/self/status")))
        #expect(String(decoding: status, as: UTF8.self).contains("\nPid:"), "a file that states 0 bytes")
        #endif
    }

    @Test func aFolderWhereAFileShouldBeIsUnreadableNotMissing() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.lock("config.vanecache", in: directory)
        #expect(try AtomicFile.read(directory.appendingPathComponent("absent")) == nil)
        #expect(throws: AtomicFileError.self) {
            try AtomicFile.read(directory.appendingPathComponent("config.vanecache"))
        }
    }
}
