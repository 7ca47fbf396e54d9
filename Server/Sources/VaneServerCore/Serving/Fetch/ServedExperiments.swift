import Crypto
package import VaneCore

/// The experiments running in one environment, as fetch serves them: for each key a running
/// experiment controls, which variant each of the key's values is. Fetch responses carry it in
/// the key's metadata (`"experiment": {"key": …, "variant": …}`) so apps record exposures where
/// they matter (docs/EXPERIMENTS.md, "What apps learn from fetch").
package struct ServedExperiments: Sendable, Equatable {
    /// No experiment running.
    package static let none = ServedExperiments([])

    /// The running experiments, by key.
    package let definitions: [ExperimentDefinition]
    /// Per parameter key: the experiment that controls it. Starting an experiment on a key that
    /// a running one controls is refused, so there is at most one.
    private let byParameter: [String: ExperimentDefinition]
    /// SHA-256 of the definitions: part of what a fetch ETag's proof binds, so a start or stop
    /// ends every proof made before it.
    package let digest: [UInt8]

    package init(_ definitions: [ExperimentDefinition]) {
        self.definitions = definitions.sorted { $0.key < $1.key }
        var byParameter: [String: ExperimentDefinition] = [:]
        var hasher = SHA256()
        for definition in self.definitions {
            for parameter in definition.parameters where byParameter[parameter] == nil {
                byParameter[parameter] = definition
            }
            hasher.update(
                data: Array(JSONValue.object(ExperimentJSON.definition(definition)).serialized(.compact).utf8)
            )
            hasher.update(data: [0])
        }
        self.byParameter = byParameter
        digest = Array(hasher.finalize())
    }

    /// What a client that got the value decided by `condition` (nil: the default value) learns
    /// about `key`: the experiment and its variant, or nil when the key is in no running
    /// experiment or that value is none of its variants (a targeting rule won first).
    package func assignment(forKey key: String, condition: String?) -> ExperimentAssignment? {
        guard let definition = byParameter[key], let variant = definition.variant(forCondition: condition) else {
            return nil
        }
        return ExperimentAssignment(experiment: definition.key, variant: variant.name)
    }

    package static func == (lhs: ServedExperiments, rhs: ServedExperiments) -> Bool { lhs.digest == rhs.digest }
}
