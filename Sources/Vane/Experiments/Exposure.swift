public import Foundation

/// An app instance read a key that a running experiment controls, and got one of its variants:
/// the fact an experiment's results count units by.
///
/// ``VaneClient`` records one the first time the app reads such a key after activating a config,
/// once per unit, experiment, variant and template version (never per read), queues it for the
/// server with the tracked events, and hands it to ``EventOptions/onExposure`` for the app's own
/// analytics.
public struct Exposure: Sendable, Hashable {
    /// The key that was read.
    public var flagKey: String
    /// The experiment's key.
    public var experiment: String
    /// The variant's name.
    public var variant: String
    /// The randomization id the value was evaluated for: the user id, or else the installation id.
    public var unit: String
    /// The template version of the active config.
    public var templateVersion: Int64
    /// When the app read the key.
    public var time: Date

    /// Creates an exposure (the client records them; tests and analytics adapters create their own).
    /// - Parameters:
    ///   - flagKey: The key that was read.
    ///   - experiment: The experiment's key.
    ///   - variant: The variant's name.
    ///   - unit: The randomization id the value was evaluated for.
    ///   - templateVersion: The template version of the active config.
    ///   - time: When the app read the key.
    public init(
        flagKey: String,
        experiment: String,
        variant: String,
        unit: String,
        templateVersion: Int64,
        time: Date
    ) {
        self.flagKey = flagKey
        self.experiment = experiment
        self.variant = variant
        self.unit = unit
        self.templateVersion = templateVersion
        self.time = time
    }

    /// The exposure as attributes named by OpenTelemetry's feature-flag semantic conventions
    /// (`feature_flag.key`, `feature_flag.result.variant`, `feature_flag.context.id`,
    /// `feature_flag.version`, `feature_flag.provider.name`), plus `vane.experiment`, which the
    /// conventions have no name for: ready for a span event or an analytics call.
    public var attributes: [String: String] {
        [
            "feature_flag.key": flagKey,
            "feature_flag.result.variant": variant,
            "feature_flag.context.id": unit,
            "feature_flag.version": String(templateVersion),
            "feature_flag.provider.name": "Vane",
            "vane.experiment": experiment,
        ]
    }

    /// What makes two exposures the same one: recorded once, sent with one id.
    var identity: String {
        [unit, experiment, variant, String(templateVersion)].joined(separator: "\u{1F}")
    }
}

/// A metric event the app tracked: what an experiment's metrics are computed from.
public struct TrackedEvent: Sendable, Hashable {
    /// The event's name, as experiments' metrics name it (`checkout_completed`).
    public var name: String
    /// Its value (an amount, a duration); nil counts as 1.
    public var value: Double?
    /// Details kept with the raw event (at most 20; exported, not analysed).
    public var properties: [String: String]
    /// The randomization id of the user or installation that did it.
    public var unit: String
    /// When it happened.
    public var time: Date

    /// Creates an event (``VaneClient/track(_:value:properties:)`` records them for the app).
    /// - Parameters:
    ///   - name: The event's name, as experiments' metrics name it.
    ///   - value: Its value; nil counts as 1.
    ///   - properties: Details kept with the raw event.
    ///   - unit: The randomization id of the user or installation that did it.
    ///   - time: When it happened.
    public init(name: String, value: Double?, properties: [String: String], unit: String, time: Date) {
        self.name = name
        self.value = value
        self.properties = properties
        self.unit = unit
        self.time = time
    }
}
