package import VaneCore

/// One event an app sends for experiments: an exposure (a unit saw a variant) or a metric event
/// (a unit did something worth measuring). Each carries an id the app generated, so a batch
/// sent twice is stored once.
package struct ExperimentEvent: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// The unit read an experiment's key and got `variant`.
        case exposure(experiment: String, variant: String, flagKey: String?, templateVersion: Int64?)
        /// The unit did `name`, worth `value` (1 when the app gave none).
        case metric(name: String, value: Double, properties: JSONObject?)
    }

    /// The app's id for the event: what makes a retry harmless.
    package var id: String
    /// The randomization id of the user or installation.
    package var unit: String
    /// When it happened, by the app's clock (milliseconds since 1970).
    package var time: Int64
    package var kind: Kind

    package var typeName: String {
        switch kind {
        case .exposure: "exposure"
        case .metric: "metric"
        }
    }
}

/// Reads a batch of events item by item: a bad event is reported with its JSON path and left out,
/// the good ones are kept.
///
/// ```json
/// {"events": [
///   {"id": "9b1d…", "type": "exposure", "time": "2026-11-23T10:00:00Z", "unit": "user-1",
///    "experiment": "checkout-button", "variant": "new-flow", "flagKey": "checkout_variant", "templateVersion": "3"},
///   {"id": "5f0a…", "type": "metric", "time": "2026-11-23T10:02:13Z", "unit": "user-1",
///    "name": "checkout_completed", "value": 39.9, "properties": {"currency": "EUR"}}
/// ]}
/// ```
package enum ExperimentEventReader {
    /// Events per batch: an SDK sends 100 at a time; a backlog after a week offline comes in
    /// several batches.
    package static let maximumEvents = 1_000
    /// How far ahead of the server's clock an event's time may be (device clocks drift).
    package static let maximumClockSkewMilliseconds: Int64 = 5 * 60 * 1_000
    /// How old an event may be: a device that was offline for a month still counts, older
    /// events are refused (they would land in experiments long finished).
    package static let maximumAgeMilliseconds: Int64 = 30 * 24 * 3_600 * 1_000
    /// Characters of an id and of a unit. Lengths of free text count Unicode code points, not
    /// what a screen shows as one character: one of those can hold thousands of code points.
    package static let maximumIdCharacters = 100
    package static let maximumUnitCharacters = 256
    /// Characters of an exposure's `flagKey`.
    package static let maximumFlagKeyCharacters = 256
    /// Members of a metric event's properties.
    package static let maximumProperties = 20
    /// Characters of a property's name and of a property's string value.
    package static let maximumPropertyNameCharacters = 100
    package static let maximumPropertyValueCharacters = 256

    /// One event read, or why it cannot be.
    package enum Outcome: Sendable {
        case event(ExperimentEvent)
        case problem(ValidationIssue)
    }

    /// A problem with one event.
    package struct Rejection: Sendable, Hashable {
        package var index: Int
        package var id: String?
        package var issue: ValidationIssue

        package init(index: Int, id: String? = nil, issue: ValidationIssue) {
            self.index = index
            self.id = id
            self.issue = issue
        }
    }

    /// A batch read: every event sent is in exactly one of `events`, `rejected` and `duplicates`.
    package struct Batch: Sendable {
        /// The good events, each id once, with their index in the batch.
        package var events: [(index: Int, event: ExperimentEvent)]
        package var rejected: [Rejection]
        /// Good events whose id an earlier event of the same batch already has.
        package var duplicates: Int
    }

    /// The good events and a rejection for each bad one; a failure when the body is not a batch
    /// at all.
    package static func read(_ body: JSONObject, now: Int64) -> Result<Batch, DocumentError> {
        guard case .array(let items)? = body["events"] else {
            return .failure(
                DocumentError(issues: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("events"),
                        rule: "required",
                        "required: an array of events"
                    )
                ])
            )
        }
        guard items.count <= maximumEvents else {
            return .failure(
                DocumentError(issues: [
                    ValidationIssue(
                        .error,
                        at: JSONPath.root.appending("events"),
                        rule: "count",
                        "\(items.count) events in one batch; send at most \(maximumEvents) per request"
                    )
                ])
            )
        }
        var batch = Batch(events: [], rejected: [], duplicates: 0)
        var seen: Set<String> = []
        for (index, item) in items.enumerated() {
            switch event(item, at: JSONPath.root.appending("events").appending(index), now: now) {
            case .event(let event):
                // The same id twice in one batch is one event, as it would be in two batches.
                if seen.insert(event.id).inserted {
                    batch.events.append((index, event))
                } else {
                    batch.duplicates += 1
                }
            case .problem(let issue):
                batch.rejected.append(
                    Rejection(index: index, id: item.objectValue?["id"]?.stringValue, issue: issue)
                )
            }
        }
        return .success(batch)
    }

    /// One event read; `path`, where it is in the batch, is made only for a problem.
    package static func event(_ value: JSONValue, at path: @autoclosure () -> JSONPath, now: Int64) -> Outcome {
        func problem(_ member: String?, _ rule: String, _ message: String) -> Outcome {
            .problem(ValidationIssue(.error, at: member.map { path().appending($0) } ?? path(), rule: rule, message))
        }
        guard case .object(let object) = value else {
            return problem(nil, "type", "expected an event object, found \(value.kindDescription)")
        }
        guard case .string(let id)? = object["id"], isToken(id, maximum: maximumIdCharacters) else {
            return problem(
                "id",
                "required",
                "required: the event's id, 1-\(maximumIdCharacters) letters, digits, '-' or '_' (a UUID), unique per event"
            )
        }
        guard case .string(let unit)? = object["unit"], isBounded(unit, maximum: maximumUnitCharacters) else {
            return problem(
                "unit",
                "required",
                "required: the unit's randomization id, 1-\(maximumUnitCharacters) characters"
            )
        }
        if let problem = controlCharacterProblem(unit, at: path().appending("unit")) { return .problem(problem) }
        guard case .string(let timeText)? = object["time"], let time = Clock.milliseconds(rfc3339: timeText) else {
            return problem(
                "time",
                "required",
                "required: when it happened, an RFC 3339 time such as 2026-01-31T12:00:00Z"
            )
        }
        if time > now + maximumClockSkewMilliseconds {
            return problem(
                "time",
                "clock-skew",
                "\(timeText) is more than \(maximumClockSkewMilliseconds / 60_000) minutes ahead of the server's clock; check the device's clock"
            )
        }
        if time < now - maximumAgeMilliseconds {
            return problem(
                "time",
                "too-old",
                "\(timeText) is more than \(maximumAgeMilliseconds / 86_400_000) days old; events that old are not counted"
            )
        }
        switch object["type"] {
        case .string("exposure")?:
            for member in object {
                switch member.key {
                case "id", "type", "time", "unit", "experiment", "variant", "flagKey", "templateVersion": continue
                default: return problem(member.key, "unknown-member", "unknown member of an exposure")
                }
            }
            guard case .string(let experiment)? = object["experiment"], Identifier.isValid(experiment) else {
                return problem("experiment", "required", "required: the experiment's key")
            }
            guard case .string(let variant)? = object["variant"], ExperimentDefinitionReader.isValidName(variant) else {
                return problem("variant", "required", "required: the variant's name, as the fetch response gave it")
            }
            var flagKey: String?
            switch object["flagKey"] {
            case nil, .null?: break
            case .string(let key)? where isBounded(key, maximum: maximumFlagKeyCharacters):
                if let problem = controlCharacterProblem(key, at: path().appending("flagKey")) {
                    return .problem(problem)
                }
                flagKey = key
            default:
                return problem(
                    "flagKey",
                    "type",
                    "expected the parameter key that was read, 1-\(maximumFlagKeyCharacters) characters"
                )
            }
            var version: Int64?
            switch object["templateVersion"] {
            case nil, .null?: break
            case .string(let text)?:
                guard let number = Int64(text), number >= 0 else {
                    return problem("templateVersion", "type", "expected a version number such as \"3\"")
                }
                version = number
            case .number(let number)?:
                guard let integer = number.intValue, integer >= 0 else {
                    return problem("templateVersion", "type", "expected a version number such as \"3\"")
                }
                version = Int64(integer)
            default: return problem("templateVersion", "type", "expected a version number such as \"3\"")
            }
            return .event(
                ExperimentEvent(
                    id: id,
                    unit: unit,
                    time: time,
                    kind: .exposure(
                        experiment: experiment,
                        variant: variant,
                        flagKey: flagKey,
                        templateVersion: version
                    )
                )
            )
        case .string("metric")?:
            for member in object {
                switch member.key {
                case "id", "type", "time", "unit", "name", "value", "properties": continue
                default: return problem(member.key, "unknown-member", "unknown member of a metric event")
                }
            }
            guard case .string(let name)? = object["name"], ExperimentDefinitionReader.isValidName(name) else {
                return problem(
                    "name",
                    "required",
                    "required: the event's name, 1-100 letters, digits, '_', '-', '.', ':' or '/' (as the experiment's metrics name it)"
                )
            }
            var value = 1.0
            switch object["value"] {
            case nil, .null?: break
            case .number(let number)? where number.value.isFinite && abs(number.value) <= 1e12: value = number.value
            default:
                return problem(
                    "value",
                    "type",
                    "expected a finite number (an amount, a duration, a count) within ±10¹²"
                )
            }
            var properties: JSONObject?
            switch object["properties"] {
            case nil, .null?: break
            case .object(let members)?:
                guard members.count <= maximumProperties else {
                    return problem("properties", "count", "at most \(maximumProperties) properties")
                }
                for member in members {
                    // The name is reported in the message, not the path: it may be the problem.
                    guard isBounded(member.key, maximum: maximumPropertyNameCharacters) else {
                        return problem(
                            "properties",
                            "property-name",
                            "property names must be 1-\(maximumPropertyNameCharacters) characters; found one of \(member.key.unicodeScalars.count)"
                        )
                    }
                    if let problem = controlCharacterProblem(member.key, at: path().appending("properties")) {
                        return .problem(problem)
                    }
                    let memberPath = path().appending("properties").appending(member.key)
                    switch member.value {
                    case .string(let text) where text.unicodeScalars.count <= maximumPropertyValueCharacters:
                        // Free text may hold line breaks and tabs; PostgreSQL cannot store NUL.
                        if text.unicodeScalars.contains("\u{0}") {
                            return .problem(
                                ValidationIssue(
                                    .error,
                                    at: memberPath,
                                    rule: "control-character",
                                    "contains U+0000 (NUL), which cannot be stored; remove it"
                                )
                            )
                        }
                    case .number, .bool: continue
                    default:
                        return .problem(
                            ValidationIssue(
                                .error,
                                at: memberPath,
                                rule: "type",
                                "expected a string of at most \(maximumPropertyValueCharacters) characters, a number or a Boolean"
                            )
                        )
                    }
                }
                properties = members
            default: return problem("properties", "type", "expected an object of strings, numbers and Booleans")
            }
            return .event(
                ExperimentEvent(
                    id: id,
                    unit: unit,
                    time: time,
                    kind: .metric(name: name, value: value, properties: properties)
                )
            )
        default:
            return problem("type", "enum", "required: \"exposure\" or \"metric\"")
        }
    }

    /// Why an exposure cannot count (its experiment is not running, or has no such variant); nil
    /// for one that can, and for every metric event.
    package static func exposureProblem(
        _ event: ExperimentEvent,
        index: Int,
        running: [String: Experiment],
        in environment: EnvironmentKey
    ) -> ValidationIssue? {
        guard case .exposure(let key, let variant, _, _) = event.kind else { return nil }
        // Made only for a problem.
        func path() -> JSONPath { JSONPath.root.appending("events").appending(index) }
        guard let experiment = running[key] else {
            return ValidationIssue(
                .error,
                at: path().appending("experiment"),
                rule: "not-running",
                "experiment \"\(key)\" is not running in \(environment); exposures count only while it runs"
            )
        }
        guard experiment.definition.variants.contains(where: { $0.name == variant }) else {
            let names = experiment.definition.variants.map { "\"\($0.name)\"" }.joined(separator: ", ")
            return ValidationIssue(
                .error,
                at: path().appending("variant"),
                rule: "unknown-variant",
                "experiment \"\(key)\" has no variant \"\(variant)\"; its variants: \(names)"
            )
        }
        // Nobody saw the experiment before it started. A device clock running behind gets the
        // same allowance as one running ahead.
        if let start = experiment.startTime, event.time < start - maximumClockSkewMilliseconds {
            return ValidationIssue(
                .error,
                at: path().appending("time"),
                rule: "before-start",
                "\(Clock.rfc3339(milliseconds: event.time)) is more than \(maximumClockSkewMilliseconds / 60_000) minutes before experiment \"\(key)\" started (\(Clock.rfc3339(milliseconds: start))); exposures before its start do not count"
            )
        }
        return nil
    }

    /// 1-`maximum` Unicode code points.
    package static func isBounded(_ text: String, maximum: Int) -> Bool {
        !text.isEmpty && text.unicodeScalars.count <= maximum
    }

    /// The problem with a control character (C0, DEL or C1) in a unit, a key or a property name,
    /// at `path` (made only then); nil when there is none. PostgreSQL cannot store NUL at all, and
    /// the others are no part of an id or a name, only of text made to mislead a reader of logs and
    /// exports.
    package static func controlCharacterProblem(
        _ text: String,
        at path: @autoclosure () -> JSONPath
    ) -> ValidationIssue? {
        guard let scalar = text.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { return nil }
        let code = String(scalar.value, radix: 16, uppercase: true)
        return ValidationIssue(
            .error,
            at: path(),
            rule: "control-character",
            "contains the control character U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code); ids, units, keys and property names are printable text"
        )
    }

    /// 1-`maximum` ASCII letters, digits, '-' and '_'.
    package static func isToken(_ text: String, maximum: Int) -> Bool {
        Identifier.isMadeOf(text, maximum: maximum, punctuation: "-_")
    }
}
