public import Foundation
import Logging
import VaneCore

/// The template a ``LocalEvaluationClient`` started with, read from disk before any download.
public struct StartupTemplate: Sendable, Hashable {
    /// Which file it came from.
    public enum Origin: String, Sendable, Hashable {
        /// ``LocalEvaluationClient/Configuration/templateFile``, shipped with the service.
        case templateFile
        /// ``LocalEvaluationClient/Configuration/cacheFile``, the last download.
        case cacheFile
    }

    /// Which file it came from.
    public var origin: Origin
    /// The file.
    public var url: URL
    /// The template's version, if it has one.
    public var templateVersion: Int64?
    /// When the file was last written: for the cache, when the template was downloaded.
    public var savedAt: Date
}

/// Reads the startup template: the newer (by version) of the template file and the cache.
enum StartupTemplateReader {
    struct Loaded {
        var template: CompiledTemplate
        var startup: StartupTemplate
    }

    static func load(templateFile: URL?, cacheFile: URL?, logger: Logger) -> Loaded? {
        // The cache comes first, so it wins a tie (`max` keeps the first of equals): it is what
        // the server served last.
        let candidates = [
            cacheFile.flatMap { read($0, origin: .cacheFile, logger: logger) },
            templateFile.flatMap { read($0, origin: .templateFile, logger: logger) },
        ]
        .compactMap { $0 }
        return candidates.max { ($0.startup.templateVersion ?? 0) < ($1.startup.templateVersion ?? 0) }
    }

    private static func read(_ url: URL, origin: StartupTemplate.Origin, logger: Logger) -> Loaded? {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(url) else {
                if origin == .templateFile { logger.warning("the template file \(url.path) does not exist") }
                return nil
            }
            bytes = read
        } catch {
            logger.warning("\(error)")
            return nil
        }
        do {
            let template = try ConfigTemplate(data: bytes)
            let compiled = try CompiledTemplate(template)
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            let savedAt = attributes?[.modificationDate] as? Date ?? Date()
            let version = template.version?.versionNumber.flatMap { Int64($0) }
            return Loaded(
                template: compiled,
                startup: StartupTemplate(origin: origin, url: url, templateVersion: version, savedAt: savedAt)
            )
        } catch {
            logger.warning(
                "the \(origin == .cacheFile ? "cached " : "")template \(url.path) cannot be used, so it is ignored: \(error)"
            )
            return nil
        }
    }
}
