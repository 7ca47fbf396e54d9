import Foundation
import VaneCore

/// What the client keeps between launches in one file: the active config and the fetched config
/// waiting for `activate()`, each with its ETag and template version.
///
/// They are written together in a single atomic replace (see ``AtomicFile``), so a crash, a full
/// disk or a restored backup can never leave an ETag beside values it does not describe — the
/// Firebase failure where a device keeps sending an ETag for a cache it no longer has and the
/// server keeps answering "not modified".
struct ConfigCacheFile: Sendable, Hashable {
    /// The format written in the file's `format` member.
    static let format = "vane-config-cache/1"

    var active: RemoteConfig?
    var fetched: RemoteConfig?

    /// The whole file as JSON.
    func serialized() -> [UInt8] {
        var object = JSONObject()
        object["format"] = .string(Self.format)
        if let active { object["active"] = Self.json(active) }
        if let fetched { object["fetched"] = Self.json(fetched) }
        return JSONValue.object(object).serializedData()
    }

    /// Reads a file written by ``serialized()``.
    /// - Throws: ``CacheFileError`` for anything else, with the JSON path of the problem.
    init(data: some Collection<UInt8>) throws(CacheFileError) {
        let json: JSONValue
        do {
            json = try JSONValue.parse(data)
        } catch {
            throw CacheFileError(path: "$", message: error.description)
        }
        guard case .object(let object) = json, object["format"]?.stringValue == Self.format else {
            throw CacheFileError(path: "$.format", message: "expected \"\(Self.format)\"")
        }
        active = try object["active"].map { value throws(CacheFileError) in try Self.config(value, at: "$.active") }
        fetched = try object["fetched"].map { value throws(CacheFileError) in try Self.config(value, at: "$.fetched") }
    }

    init(active: RemoteConfig?, fetched: RemoteConfig?) {
        self.active = active
        self.fetched = fetched
    }

    static func json(_ config: RemoteConfig) -> JSONValue {
        var entries = JSONObject()
        for key in config.entries.keys.sorted() { entries[key] = config.entries[key].map { .string($0) } }
        var metadata = JSONObject()
        for key in config.metadata.keys.sorted() { metadata[key] = config.metadata[key]?.json() }
        var object = JSONObject()
        object["templateVersion"] = .number(JSONNumber(Int(config.templateVersion)))
        if let etag = config.etag { object["etag"] = .string(etag) }
        object["fetchedAt"] = .number(JSONNumber(config.fetchedAt.timeIntervalSince1970))
        object["context"] = .string(config.contextText)
        object["entries"] = .object(entries)
        object["metadata"] = .object(metadata)
        return .object(object)
    }

    static func config(_ json: JSONValue, at path: String) throws(CacheFileError) -> RemoteConfig {
        guard case .object(let object) = json else { throw CacheFileError(path: path, message: "expected an object") }
        guard let version = object["templateVersion"]?.numberValue?.intValue else {
            throw CacheFileError(path: path + ".templateVersion", message: "expected an integer")
        }
        guard let fetchedAt = object["fetchedAt"]?.numberValue?.value else {
            throw CacheFileError(path: path + ".fetchedAt", message: "expected seconds since 1970")
        }
        guard case .object(let entryObject)? = object["entries"] else {
            throw CacheFileError(path: path + ".entries", message: "expected an object")
        }
        var entries: [String: String] = [:]
        entries.reserveCapacity(entryObject.count)
        for member in entryObject {
            guard case .string(let value) = member.value else {
                throw CacheFileError(path: path + ".entries." + member.key, message: "expected a string")
            }
            entries[member.key] = value
        }
        var metadata: [String: RemoteKeyMetadata] = [:]
        if case .object(let metadataObject)? = object["metadata"] {
            for member in metadataObject {
                if case .object(let details) = member.value { metadata[member.key] = RemoteKeyMetadata(json: details) }
            }
        }
        return RemoteConfig(
            entries: entries,
            metadata: metadata,
            templateVersion: Int64(version),
            etag: object["etag"]?.stringValue,
            fetchedAt: Date(timeIntervalSince1970: fetchedAt),
            contextText: object["context"]?.stringValue ?? ""
        )
    }
}

/// A cache or overrides file that cannot be read; the client starts without it and says so in its log.
struct CacheFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The JSON path of the problem.
    var path: String
    /// What is wrong there.
    var message: String

    var description: String { "\(path): \(message)" }
}
