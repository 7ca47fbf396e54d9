public import Foundation
public import VaneCore

/// One set of values the server evaluated for this app instance.
public struct FetchedConfig: Sendable, Hashable {
    /// The values by key, as sent.
    public var entries: [String: String] {
        get { values.byKey }
        set { values = ConfigEntries(newValue) }
    }
    /// The values in order, each read once; ``entries`` is made from them on first use.
    private(set) var values: ConfigEntries
    /// Debug-menu details the server sent for some keys.
    public var metadata: [String: KeyMetadata]
    /// The template version the values came from.
    public var templateVersion: Int64
    /// The response's ETag: sent back as `If-None-Match`, so an unchanged result costs a 304.
    public var etag: String?
    /// When the server last confirmed these values (a fetch or a 304).
    public var fetchedAt: Date
    /// The evaluation context the values were computed for, as JSON text.
    var contextText: String

    /// The randomization id the values were computed for (exposures are this unit's), from
    /// ``contextText``; nil for a config made in code.
    var randomizationId: String? {
        guard !contextText.isEmpty, let context = try? JSONValue.parse(Array(contextText.utf8)) else { return nil }
        return context.objectValue?["randomizationId"]?.stringValue
    }

    /// Creates a config (fetches create them; tests and previews make their own).
    /// - Parameters:
    ///   - entries: The values by key, as the server sends them.
    ///   - metadata: Debug-menu details for some keys.
    ///   - templateVersion: The template version the values came from.
    ///   - etag: The response's ETag, if any.
    ///   - fetchedAt: When the server last confirmed these values.
    public init(
        entries: [String: String],
        metadata: [String: KeyMetadata] = [:],
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
        metadata: [String: KeyMetadata],
        templateVersion: Int64,
        etag: String?,
        fetchedAt: Date,
        contextText: String
    ) {
        self.init(
            values: ConfigEntries(entries),
            metadata: metadata,
            templateVersion: templateVersion,
            etag: etag,
            fetchedAt: fetchedAt,
            contextText: contextText
        )
    }

    /// A config read from the cache file.
    init(
        values: ConfigEntries,
        metadata: [String: KeyMetadata],
        templateVersion: Int64,
        etag: String?,
        fetchedAt: Date,
        contextText: String
    ) {
        self.values = values
        self.metadata = metadata
        self.templateVersion = templateVersion
        self.etag = etag
        self.fetchedAt = fetchedAt
        self.contextText = contextText
    }

    /// Whether two configs hold the same values by key (in any order), metadata, version, ETag,
    /// time and context.
    /// - Parameters:
    ///   - lhs: A config.
    ///   - rhs: Another config.
    /// - Returns: Whether they are the same.
    public static func == (lhs: FetchedConfig, rhs: FetchedConfig) -> Bool {
        lhs.templateVersion == rhs.templateVersion && lhs.etag == rhs.etag && lhs.fetchedAt == rhs.fetchedAt
            && lhs.contextText == rhs.contextText && lhs.metadata == rhs.metadata
            && (lhs.values === rhs.values || lhs.entries == rhs.entries)
    }

    /// Hashes what ``==(_:_:)`` compares.
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entries)
        hasher.combine(metadata)
        hasher.combine(templateVersion)
        hasher.combine(etag)
        hasher.combine(fetchedAt)
        hasher.combine(contextText)
    }
}
