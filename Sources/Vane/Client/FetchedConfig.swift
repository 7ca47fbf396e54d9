import Foundation
import VaneCore

/// One set of values the server evaluated for this app instance.
public struct FetchedConfig: Sendable, Hashable {
    /// The values by key, as sent.
    public var entries: [String: String]
    /// Debug-menu details the server sent for some keys.
    public var metadata: [String: RemoteKeyMetadata]
    /// The template version the values came from.
    public var templateVersion: Int64
    /// The response's ETag: sent back as `If-None-Match`, so an unchanged result costs a 304.
    public var etag: String?
    /// When the server last confirmed these values (a fetch or a 304).
    public var fetchedAt: Date
    /// The evaluation context the values were computed for, as JSON text.
    var contextText: String

    /// Creates a config.
    public init(
        entries: [String: String],
        metadata: [String: RemoteKeyMetadata] = [:],
        templateVersion: Int64,
        etag: String? = nil,
        fetchedAt: Date
    ) {
        self.init(
            entries: entries,
            metadata: metadata,
            templateVersion: templateVersion,
            etag: etag,
            fetchedAt: fetchedAt,
            contextText: ""
        )
    }

    init(
        entries: [String: String],
        metadata: [String: RemoteKeyMetadata],
        templateVersion: Int64,
        etag: String?,
        fetchedAt: Date,
        contextText: String
    ) {
        self.entries = entries
        self.metadata = metadata
        self.templateVersion = templateVersion
        self.etag = etag
        self.fetchedAt = fetchedAt
        self.contextText = contextText
    }
}

/// The details a template's `vane` member gives a key, as fetch responses carry them.
public struct RemoteKeyMetadata: Sendable, Hashable {
    /// A short human name.
    public var title: String?
    /// What the key controls.
    public var description: String?
    /// The debug-menu section.
    public var category: String?
    /// The only values the key takes; empty for any.
    public var allowedValues: [String]
    /// Whether live updates may apply the key at once.
    public var realtime: Bool

    /// Creates metadata.
    public init(
        title: String? = nil,
        description: String? = nil,
        category: String? = nil,
        allowedValues: [String] = [],
        realtime: Bool = false
    ) {
        self.title = title
        self.description = description
        self.category = category
        self.allowedValues = allowedValues
        self.realtime = realtime
    }

    /// Reads the metadata object of a fetch response; members of the wrong type are ignored.
    init(json: JSONObject) {
        self.init(
            title: json["title"]?.stringValue,
            description: json["description"]?.stringValue,
            category: json["category"]?.stringValue,
            allowedValues: json["allowedValues"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            realtime: json["realtime"]?.boolValue ?? false
        )
    }

    /// The metadata as the JSON object ``init(json:)`` reads.
    func json() -> JSONValue {
        var object = JSONObject()
        if let title { object["title"] = .string(title) }
        if let description { object["description"] = .string(description) }
        if let category { object["category"] = .string(category) }
        if !allowedValues.isEmpty { object["allowedValues"] = .array(allowedValues.map { .string($0) }) }
        if realtime { object["realtime"] = .bool(true) }
        return .object(object)
    }
}
