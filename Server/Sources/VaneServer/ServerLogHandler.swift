public import Logging
import VaneServerCore

/// Writes log lines to standard error as swift-log's `StreamLogHandler` does, but formats the
/// logger's metadata only when a line is written.
///
/// Hummingbird gives every request a logger with its own request id, and `StreamLogHandler`
/// formats all of its metadata each time one value is set: work done for every request, for
/// lines that are mostly never written.
public struct ServerLogHandler: LogHandler {
    private var stream: StreamLogHandler

    /// The logger's metadata, merged into each line written.
    public var metadata: Logger.Metadata = [:]

    /// The least severe level written.
    public var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    /// A handler for the logger with this label, writing at `level` and above.
    public init(label: String, level: Logger.Level) {
        stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = level
    }

    /// One metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line with the logger's metadata and the line's own.
    public func log(event: LogEvent) {
        var event = event
        event.metadata = event.metadata.map { metadata.merging($0) { _, new in new } } ?? metadata
        stream.log(event: event)
    }
}
