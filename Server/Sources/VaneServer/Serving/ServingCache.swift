import Logging
import NIOConcurrencyHelpers
import VaneCore

/// The templates being served, one per environment, swapped atomically on publish.
///
/// Readers take a reference under a lock held for a dictionary lookup; a publish compiles the
/// new version first and only then swaps it in, so a request sees the old version or the new one,
/// never a half-built one.
public final class ServingCache: Sendable {
    private let entries = NIOLockedValueBox<[EnvironmentKey: ServedTemplate]>([:])

    /// Creates an empty cache.
    public init() {}

    /// The template served for an environment, or nil before its first publish.
    public func template(for environment: EnvironmentKey) -> ServedTemplate? {
        entries.withLockedValue { $0[environment] }
    }

    /// Serves a version, unless a newer one is already served (publishes can arrive out of order
    /// from several nodes).
    public func install(_ template: ServedTemplate) {
        entries.withLockedValue { entries in
            if let current = entries[template.environment], current.versionNumber >= template.versionNumber { return }
            entries[template.environment] = template
        }
    }

    /// The version served per environment.
    public var versionNumbers: [EnvironmentKey: Int64] {
        entries.withLockedValue { $0.mapValues(\.versionNumber) }
    }

    /// Loads the newest version of every environment from the store.
    public func load(from store: ConfigStore, logger: Logger) async throws {
        for version in try await store.allLatestVersions() {
            do {
                install(try ServedTemplate(version))
            } catch {
                logger.error(
                    "stored template does not compile; not served",
                    metadata: [
                        "environment": "\(version.projectId)/\(version.environmentId)", "version": "\(version.number)",
                    ]
                )
            }
        }
    }
}
