import NIOConcurrencyHelpers

/// The templates being served, one per environment, swapped atomically on publish, each with
/// its environment's running experiments.
///
/// Readers take a reference under a lock held for a dictionary lookup; a publish compiles the
/// new version first and only then swaps it in, so a request sees the old version or the new one,
/// never a half-built one. What goes in is ``TemplatePublisher``'s and ``ExperimentStore``'s
/// business.
package final class ServingCache: Sendable {
    private struct Entries {
        package var templates: [EnvironmentKey: ServedTemplate] = [:]
        package var experiments: [EnvironmentKey: ServedExperiments] = [:]
    }

    private let entries = NIOLockedValueBox(Entries())

    /// Creates an empty cache.
    package init() {}

    /// The template served for an environment, or nil before its first publish.
    package func template(for environment: EnvironmentKey) -> ServedTemplate? {
        entries.withLockedValue { $0.templates[environment] }
    }

    /// Serves a version, unless a newer one is already served (publishes can arrive out of order
    /// from several nodes), with the environment's running experiments as they are now.
    package func install(_ template: ServedTemplate) {
        entries.withLockedValue { entries in
            if let current = entries.templates[template.environment], current.versionNumber >= template.versionNumber {
                return
            }
            // An experiment started or stopped while this version was being built.
            let experiments = entries.experiments[template.environment] ?? .none
            entries.templates[template.environment] =
                template.experiments == experiments ? template : template.serving(experiments)
        }
    }

    /// The running experiments served in `environment`: a new version is built with them, so
    /// ``install(_:)`` does not build it again.
    package func experiments(for environment: EnvironmentKey) -> ServedExperiments {
        entries.withLockedValue { $0.experiments[environment] ?? .none }
    }

    /// Serves these running experiments in `environment` from now on; the environment's template
    /// is served again with them when they changed.
    package func serve(_ experiments: ServedExperiments, in environment: EnvironmentKey) {
        entries.withLockedValue { entries in
            guard (entries.experiments[environment] ?? .none) != experiments else { return }
            entries.experiments[environment] = experiments
            if let template = entries.templates[environment] {
                entries.templates[environment] = template.serving(experiments)
            }
        }
    }

    /// Serves the running experiments of every environment: those not named have none.
    package func serveRunning(_ running: [EnvironmentKey: ServedExperiments]) {
        let known = entries.withLockedValue { Set($0.experiments.keys) }
        for environment in known.union(running.keys) { serve(running[environment] ?? .none, in: environment) }
    }

    /// The version served per environment.
    package var versionNumbers: [EnvironmentKey: Int64] {
        entries.withLockedValue { $0.templates.mapValues(\.versionNumber) }
    }
}
