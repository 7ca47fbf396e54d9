package import VaneCore

/// Why one key has its value for one context: what `vane eval --explain` prints for it and what
/// the console's "Who gets what" page shows, from one place.
///
/// ```json
/// "banner_text": {"value": "Willkommen bei Vane!", "source": "remote", "reason": "conditionalValue", "condition": "germany_austria"}
/// ```
package struct ResolutionExplanation: Sendable, Hashable {
    /// Where the value came from.
    package enum Source: String, Sendable, Hashable {
        /// The template sent it.
        case remote
        /// The app's own default for the key applies.
        case inAppDefault
        /// Nothing: neither the template nor an in-app default gives a value.
        case none
    }

    /// How the template resolved the key.
    package enum Reason: String, Sendable, Hashable {
        /// No condition decided; the parameter's default value applies.
        case defaultValue
        /// A condition's value won (``ResolutionExplanation/condition`` names it).
        case conditionalValue
        /// The chosen value is `useInAppDefault`.
        case useInAppDefault
        /// The chosen value is managed by a Firebase service Vane cannot evaluate.
        case managedValue
        /// No condition applied and the parameter has no default value.
        case noDefaultValue
        /// The template has no such key; only an in-app default gives it.
        case notInTemplate
    }

    /// The value the app ends up with, or nil when there is none.
    package var value: String?
    /// Where ``value`` came from.
    package var source: Source
    /// How the template resolved the key.
    package var reason: Reason
    /// The condition whose value won, if one did.
    package var condition: String?
    /// The managed value's field name (`rolloutValue`, …) when ``reason`` is `managedValue`.
    package var managed: String?

    /// Explains a resolution, with the app's in-app default for the key when it has one.
    package init(_ resolution: ParameterResolution, inAppDefault: CoercedValue? = nil) {
        switch resolution.outcome {
        case .value: reason = resolution.matchedCondition == nil ? .defaultValue : .conditionalValue
        case .useInAppDefault: reason = .useInAppDefault
        case .managed: reason = .managedValue
        case .noDefaultValue: reason = .noDefaultValue
        }
        if let value = resolution.value {
            self.value = value.stringValue
            source = .remote
        } else if let inAppDefault {
            self.value = inAppDefault.stringValue
            source = .inAppDefault
        } else {
            value = nil
            source = .none
        }
        condition = resolution.matchedCondition
        if case .managed(let kind) = resolution.outcome { managed = kind } else { managed = nil }
    }

    /// A key the template does not have, given by an in-app default only.
    package init(notInTemplate inAppDefault: CoercedValue) {
        value = inAppDefault.stringValue
        source = .inAppDefault
        reason = .notInTemplate
        condition = nil
        managed = nil
    }

    /// The `--explain` object: `value`, `source`, `reason`, then `condition` and `managed` when
    /// they apply.
    package var json: JSONObject {
        var object = JSONObject()
        object["value"] = value.map { JSONValue.string($0) } ?? JSONValue.null
        object["source"] = .string(source.rawValue)
        object["reason"] = .string(reason.rawValue)
        if let condition { object["condition"] = .string(condition) }
        if let managed { object["managed"] = .string(managed) }
        return object
    }
}
