import Foundation
import VaneCore

/// An exposure or a metric event waiting to be sent, in the form `POST …/events` takes and the
/// queue file keeps.
struct QueuedEvent: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case exposure(experiment: String, variant: String, flagKey: String, templateVersion: Int64)
        case metric(name: String, value: Double?, properties: [String: String])
    }

    /// Unique per event: a retry of a batch the server already stored changes nothing.
    var id: String
    var unit: String
    /// Milliseconds since 1970.
    var time: Int64
    var kind: Kind

    /// The object the server reads (docs/EXPERIMENTS.md, "Sending events").
    func json() -> JSONObject {
        var object: JSONObject = [
            "id": .string(id), "unit": .string(unit), "time": .string(ISO8601Timestamp.string(milliseconds: time)),
        ]
        switch kind {
        case .exposure(let experiment, let variant, let flagKey, let templateVersion):
            object["type"] = "exposure"
            object["experiment"] = .string(experiment)
            object["variant"] = .string(variant)
            object["flagKey"] = .string(flagKey)
            object["templateVersion"] = .string(String(templateVersion))
        case .metric(let name, let value, let properties):
            object["type"] = "metric"
            object["name"] = .string(name)
            if let value { object["value"] = .number(JSONNumber(value)) }
            if !properties.isEmpty {
                var members = JSONObject()
                for key in properties.keys.sorted() { members[key] = properties[key].map { .string($0) } }
                object["properties"] = .object(members)
            }
        }
        return object
    }

    /// Reads an event of the queue file; nil for one this version cannot read (it is dropped).
    init?(json: JSONObject) {
        guard let id = json["id"]?.stringValue, let unit = json["unit"]?.stringValue,
            let timeText = json["time"]?.stringValue,
            let time = ISO8601Timestamp.milliseconds(from: timeText[...], strict: true)
        else { return nil }
        let kind: Kind
        switch json["type"]?.stringValue {
        case "exposure":
            guard let experiment = json["experiment"]?.stringValue, let variant = json["variant"]?.stringValue,
                let flagKey = json["flagKey"]?.stringValue,
                let version = json["templateVersion"]?.stringValue.flatMap({ Int64($0) })
            else { return nil }
            kind = .exposure(experiment: experiment, variant: variant, flagKey: flagKey, templateVersion: version)
        case "metric":
            guard let name = json["name"]?.stringValue else { return nil }
            var properties: [String: String] = [:]
            for member in json["properties"]?.objectValue ?? [:] {
                if let text = member.value.stringValue { properties[member.key] = text }
            }
            kind = .metric(name: name, value: json["value"]?.numberValue?.value, properties: properties)
        default:
            return nil
        }
        self.init(id: id, unit: unit, time: time, kind: kind)
    }

    init(id: String, unit: String, time: Int64, kind: Kind) {
        self.id = id
        self.unit = unit
        self.time = time
        self.kind = kind
    }
}
