/// Which variant of a running experiment a key's value is: what a fetch response tells a client
/// in the key's metadata (`"experiment": {"key": "checkout-button", "variant": "green"}`), so the
/// client records an exposure when the app reads the key and only then.
///
/// The server adds it for keys that a running experiment controls, when the value the client got
/// is one of the experiment's variants; it never comes from the template itself.
public struct ExperimentAssignment: Sendable, Hashable {
    /// The experiment's key.
    public var experiment: String
    /// The variant's name, as the experiment defines it (never its conditions).
    public var variant: String

    /// Creates an assignment.
    public init(experiment: String, variant: String) {
        self.experiment = experiment
        self.variant = variant
    }

    /// Reads `{"key": "…", "variant": "…"}`; nil when either member is missing or not text.
    public init?(json: JSONObject) {
        guard let experiment = json["key"]?.stringValue, let variant = json["variant"]?.stringValue,
            !experiment.isEmpty, !variant.isEmpty
        else { return nil }
        self.init(experiment: experiment, variant: variant)
    }

    /// The object ``init(json:)`` reads.
    public func json() -> JSONObject {
        ["key": .string(experiment), "variant": .string(variant)]
    }
}
