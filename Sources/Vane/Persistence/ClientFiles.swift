import Foundation
import Logging
import VaneCore

/// A client's files, where its ``StoragePlan`` puts them: `config.vanecache` (the cache),
/// `overrides.json`, `installation-id` and `events.json` (the ``EventQueue``).
///
/// A damaged file is logged and treated as missing; the next write replaces it. A file that is
/// there but cannot be read (before the device's first unlock, without permission) is not
/// missing: it is never written over, and ``retryUnreadable()`` reads it again later. Writes run
/// on the directory's ``FileWriter``, off the caller's thread; a failed write is logged and leaves
/// the previous file in place.
struct ClientFiles: Sendable {
    let plan: StoragePlan
    let logger: Logger
    let writer: FileWriter
    /// Files that exist but could not be read: not written until a read succeeds.
    private let unreadable = LockedValue<Set<URL>>([])

    // File URLs are made with `isDirectory: false`: without it Foundation asks the file system,
    // and a path that is a folder for a moment would get a trailing slash and another identity.
    var directory: URL { plan.directory }
    var cacheURL: URL { directory.appendingPathComponent("config.vanecache", isDirectory: false) }
    var overridesURL: URL { directory.appendingPathComponent("overrides.json", isDirectory: false) }
    var installationIdURL: URL { plan.installationIdFile }
    var eventsURL: URL { directory.appendingPathComponent("events.json", isDirectory: false) }

    /// What reading one file found.
    enum Loaded<Value> {
        case found(Value)
        /// Not there, or damaged (logged): the next write replaces it.
        case missing
        /// There, but not readable now (logged): left as it is.
        case unreadable
    }

    /// Opens (and creates) the plan's folders; nil when they cannot be created.
    init?(plan: StoragePlan, logger: Logger) {
        do {
            for folder in Set([plan.directory, plan.installationIdFile.deletingLastPathComponent()]) {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
        } catch {
            logger.error(
                """
                cannot create the storage directory \(plan.directory.path) (\(error.localizedDescription)); \
                values are kept in memory only and the next launch starts from the defaults
                """
            )
            return nil
        }
        self.plan = plan
        self.logger = logger
        writer = FileWriter(directory: plan.directory)
        // Another client of this process may still be writing here: read what it wrote.
        writer.waitForWrites()
        // Before any file is made here, on this thread: a new file takes its folder's protection
        // class, and the clean-up must not race the installation id's first temporary file.
        // Both are a few metadata calls; the writes that flush to disk run on the writer's queue.
        do {
            try StorageAttributes.apply(plan)
        } catch {
            logger.warning("cannot set the backup and protection attributes of \(plan.directory.path): \(error)")
        }
        Self.removeAbandonedTemporaryFiles(in: plan.directory, keepingRecent: plan.isShared)
        if plan.isShared {
            Self.removeAbandonedTemporaryFiles(
                in: plan.installationIdFile.deletingLastPathComponent(),
                keepingRecent: true
            )
        }
    }

    /// Deletes temporary files a crash left between writing and renaming (see ``AtomicFile``).
    /// With `keepingRecent`, only those older than a minute: in an App Group folder another
    /// process may be writing one right now.
    private static func removeAbandonedTemporaryFiles(in directory: URL, keepingRecent: Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let cutoff = Date().addingTimeInterval(-60)
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            let url = directory.appendingPathComponent(name)
            if keepingRecent,
                let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate]
                    as? Date,
                modified > cutoff
            {
                continue
            }
            try? FileManager.default.removeItem(at: url)
        }
    }

    // MARK: - Reading

    func loadCache() -> Loaded<ConfigCacheFile> {
        load(cacheURL, what: "the config cache", consequence: "the next fetch replaces it") { bytes in
            try ConfigCacheFile(data: bytes)
        }
    }

    func loadOverrides() -> Loaded<[String: String]> {
        load(overridesURL, what: "the overrides file", consequence: "the overrides are lost") { bytes in
            let json = try JSONValue.parse(bytes)
            guard case .object(let object) = json else {
                throw CacheFileError(path: "$", message: "expected an object of key → value")
            }
            var overrides: [String: String] = [:]
            for member in object {
                guard case .string(let value) = member.value else {
                    throw CacheFileError(
                        path: JSONPath.root.appending(member.key).description,
                        message: "expected a string"
                    )
                }
                overrides[member.key] = value
            }
            return overrides
        }
    }

    /// The stored installation id; when there is none, a new random one, stored for the next
    /// launch (or the one another process of the App Group stored first). Nil while the file is
    /// there but unreadable: the caller must not make up a new one.
    func loadInstallationId() -> String? {
        switch load(installationIdURL, what: "the installation id", consequence: "a new one is made", Self.readId) {
        case .found(let id):
            rememberInDefaults(id)
            return id
        case .unreadable:
            return nil
        case .missing:
            // tvOS may have purged the file; its defaults keep the id.
            let id = idFromDefaults() ?? UUID().uuidString.lowercased()
            do {
                // Once per installation, on this thread: a second process must read the winner's id.
                if try !AtomicFile.create(Array(id.utf8), at: installationIdURL) {
                    if case .found(let winner) = load(
                        installationIdURL,
                        what: "the installation id",
                        consequence: "",
                        Self.readId
                    ) {
                        rememberInDefaults(winner)
                        return winner
                    }
                }
            } catch {
                logger.error("\(error)")
            }
            rememberInDefaults(id)
            return id
        }
    }

    private static func readId(_ bytes: [UInt8]) throws -> String {
        let text = ValueCoercion.trimmed(String(decoding: bytes, as: UTF8.self))
        guard !text.isEmpty, text.utf8.count <= 128 else {
            throw CacheFileError(path: "byte 0", message: "expected an id of 1 to 128 bytes")
        }
        return text
    }

    private func load<Value>(
        _ url: URL,
        what: String,
        consequence: String,
        _ decode: ([UInt8]) throws -> Value
    ) -> Loaded<Value> {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(url)
        } catch {
            unreadable.withLockedValue { _ = $0.insert(url) }
            logger.warning("cannot read \(what) yet: \(error); it is left as it is and read again later")
            return .unreadable
        }
        unreadable.withLockedValue { _ = $0.remove(url) }
        guard let bytes else { return .missing }
        do {
            return .found(try decode(bytes))
        } catch {
            logger.warning("ignoring \(what) \(url.path): \(error); \(consequence)")
            return .missing
        }
    }

    /// Whether some file could not be read and waits for ``retryUnreadable()``.
    var hasUnreadableFiles: Bool { unreadable.withLockedValue { !$0.isEmpty } }

    /// What ``retryUnreadable()`` could read now; nil members stayed unreadable or were not.
    struct Recovered {
        var cache: Loaded<ConfigCacheFile>?
        var overrides: Loaded<[String: String]>?
        var installationId: String?
    }

    /// Reads the files that were unreadable again (after the device's first unlock, say).
    func retryUnreadable() -> Recovered {
        let urls = unreadable.withLockedValue { $0 }
        var recovered = Recovered()
        if urls.contains(cacheURL) {
            let cache = loadCache()
            if case .unreadable = cache {} else { recovered.cache = cache }
        }
        if urls.contains(overridesURL) {
            let overrides = loadOverrides()
            if case .unreadable = overrides {} else { recovered.overrides = overrides }
        }
        if urls.contains(installationIdURL) { recovered.installationId = loadInstallationId() }
        return recovered
    }

    // MARK: - Writing

    /// Writes the cache on the writer's queue; `make` is called there, for the newest state.
    func saveCache(_ make: @escaping @Sendable () -> ConfigCacheFile) {
        schedule(cacheURL) { make().serialized() }
    }

    /// Writes the overrides on the writer's queue; `make` is called there, for the newest state.
    func saveOverrides(_ make: @escaping @Sendable () -> [String: String]) {
        schedule(overridesURL) {
            let overrides = make()
            var object = JSONObject()
            for key in overrides.keys.sorted() { object[key] = overrides[key].map { .string($0) } }
            return JSONValue.object(object).serializedData(.pretty)
        }
    }

    private func schedule(_ url: URL, _ bytes: @escaping @Sendable () -> [UInt8]) {
        writer.schedule(url) { [unreadable, logger] in
            // A file that failed to read keeps what it has: writing would replace it with less.
            guard !unreadable.withLockedValue({ $0.contains(url) }) else { return }
            do {
                try AtomicFile.write(bytes(), to: url)
            } catch {
                logger.error("\(error)")
            }
        }
    }

    // MARK: - tvOS: the installation id in UserDefaults

    private var defaults: UserDefaults? {
        guard let slot = plan.installationIdDefaults else { return nil }
        return slot.suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
    }

    private func idFromDefaults() -> String? {
        guard let key = plan.installationIdDefaults?.key, let id = defaults?.string(forKey: key),
            (try? Self.readId(Array(id.utf8))) != nil
        else { return nil }
        return id
    }

    private func rememberInDefaults(_ id: String) {
        guard let key = plan.installationIdDefaults?.key, let defaults, defaults.string(forKey: key) != id else {
            return
        }
        defaults.set(id, forKey: key)
    }
}
