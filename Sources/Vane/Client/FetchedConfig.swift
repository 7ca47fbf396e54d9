public import Foundation
public import VaneCore

/// One set of values the server evaluated for this app instance.
public struct FetchedConfig: Sendable, Hashable {
    /// The values by key, as sent.
    public var entries: [String: String]
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

    /// Creates a config.
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
        self.entries = entries
        self.metadata = metadata
        self.templateVersion = templateVersion
        self.etag = etag
        self.fetchedAt = fetchedAt
        self.contextText = contextText
    }
}
