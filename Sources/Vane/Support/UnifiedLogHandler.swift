#if canImport(os)
public import Foundation
public import Logging
import os

/// A swift-log handler that writes to Apple's unified log, so the SDK's messages from a device
/// show in Console.app and `log stream` (subsystem: the app's bundle identifier; category: the
/// logger's label, `vane`).
///
/// ``VaneClient/Configuration`` uses it by default on Apple platforms. To send every swift-log
/// logger of the app there, bootstrap it once at launch:
///
/// ```swift
/// LoggingSystem.bootstrap { UnifiedLogHandler(label: $0) }
/// ```
///
/// Messages are marked public: the SDK never logs keys or values, and a private message reads
/// `<private>` in Console.app. Uses `os.Logger` (iOS 14, macOS 11, tvOS 14, watchOS 7, visionOS 1).
/// https://developer.apple.com/documentation/os/logger
public struct UnifiedLogHandler: LogHandler {
    /// Metadata added to every message.
    public var metadata: Logging.Logger.Metadata = [:]
    /// The lowest level written; `.info` by default.
    public var logLevel: Logging.Logger.Level = .info
    /// Contextual metadata, read for every message.
    public var metadataProvider: Logging.Logger.MetadataProvider?
    private let log: os.Logger

    /// A handler for the logger with this label.
    /// - Parameters:
    ///   - label: The category in the unified log.
    ///   - subsystem: The subsystem; by default the main bundle's identifier (or `vane`).
    public init(label: String, subsystem: String? = nil) {
        log = os.Logger(subsystem: subsystem ?? Bundle.main.bundleIdentifier ?? "vane", category: label)
    }

    /// One metadata value.
    /// - Parameter key: The metadata key.
    public subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one message with its metadata as `key=value` pairs.
    /// - Parameter event: The message, its level and its metadata, as swift-log hands them over.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var text = "\(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { text += " \(key)=\(value)" }
        log.log(level: Self.type(of: event.level), "\(text, privacy: .public)")
    }

    /// swift-log's levels on the unified log's types, as `os.Logger`'s own methods map them
    /// (`notice` is `.default`, `warning` is `.error`, `critical` is `.fault`).
    static func type(of level: Logging.Logger.Level) -> OSLogType {
        switch level {
        case .trace, .debug: .debug
        case .info: .info
        case .notice: .default
        case .warning, .error: .error
        case .critical: .fault
        }
    }
}
#endif
