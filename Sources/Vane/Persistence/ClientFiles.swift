import Foundation
import Logging
import VaneCore

/// A client's files in its storage directory: `config.vanecache` (the cache), `overrides.json`,
/// `installation-id` and `events.json` (the ``EventQueue``). Unreadable files are logged and treated as missing; failed writes are
/// logged and leave the previous file in place.
struct ClientFiles: Sendable {
    let directory: URL
    let logger: Logger

    var cacheURL: URL { directory.appendingPathComponent("config.vanecache") }
    var overridesURL: URL { directory.appendingPathComponent("overrides.json") }
    var installationIdURL: URL { directory.appendingPathComponent("installation-id") }
    var eventsURL: URL { directory.appendingPathComponent("events.json") }

    /// Opens (and creates) the directory; nil when it cannot be created.
    init?(directory: URL, logger: Logger) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            logger.error(
                """
                cannot create the storage directory \(directory.path) (\(error.localizedDescription)); \
                values are kept in memory only and the next launch starts from the defaults
                """
            )
            return nil
        }
        self.directory = directory
        self.logger = logger
        removeAbandonedTemporaryFiles()
    }

    /// Deletes temporary files a crash left between writing and renaming (see ``AtomicFile``).
    private func removeAbandonedTemporaryFiles() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    func loadCache() -> ConfigCacheFile? {
        do {
            guard let bytes = try AtomicFile.read(cacheURL) else { return nil }
            return try ConfigCacheFile(data: bytes)
        } catch {
            logger.warning("ignoring the config cache \(cacheURL.path): \(error); the next fetch replaces it")
            return nil
        }
    }

    func saveCache(_ file: ConfigCacheFile) {
        write(file.serialized(), to: cacheURL)
    }

    func loadOverrides() -> [String: String] {
        do {
            guard let bytes = try AtomicFile.read(overridesURL) else { return [:] }
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
        } catch {
            logger.warning("ignoring the overrides file \(overridesURL.path): \(error)")
            return [:]
        }
    }

    func saveOverrides(_ overrides: [String: String]) {
        var object = JSONObject()
        for key in overrides.keys.sorted() { object[key] = overrides[key].map { .string($0) } }
        write(JSONValue.object(object).serializedData(.pretty), to: overridesURL)
    }

    /// The stored installation id, or a new random one that is stored for the next launch.
    func loadInstallationId() -> String {
        if let bytes = try? AtomicFile.read(installationIdURL) {
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty, text.utf8.count <= 128 { return text }
        }
        let id = UUID().uuidString.lowercased()
        write(Array(id.utf8), to: installationIdURL)
        return id
    }

    private func write(_ bytes: [UInt8], to url: URL) {
        do {
            try AtomicFile.write(bytes, to: url)
        } catch {
            logger.error("\(error)")
        }
    }
}
