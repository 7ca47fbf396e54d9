import NIOConcurrencyHelpers

/// The templates being served, one per environment, swapped atomically on publish.
///
/// Readers take a reference under a lock held for a dictionary lookup; a publish compiles the
/// new version first and only then swaps it in, so a request sees the old version or the new one,
/// never a half-built one. What goes in is ``TemplatePublisher``'s business.
final class ServingCache: Sendable {
    private let entries = NIOLockedValueBox<[EnvironmentKey: ServedTemplate]>([:])

    /// Creates an empty cache.
    init() {}

    /// The template served for an environment, or nil before its first publish.
    func template(for environment: EnvironmentKey) -> ServedTemplate? {
        entries.withLockedValue { $0[environment] }
    }

    /// Serves a version, unless a newer one is already served (publishes can arrive out of order
    /// from several nodes).
    func install(_ template: ServedTemplate) {
        entries.withLockedValue { entries in
            if let current = entries[template.environment], current.versionNumber >= template.versionNumber { return }
            entries[template.environment] = template
        }
    }

    /// The version served per environment.
    var versionNumbers: [EnvironmentKey: Int64] {
        entries.withLockedValue { $0.mapValues(\.versionNumber) }
    }
}
