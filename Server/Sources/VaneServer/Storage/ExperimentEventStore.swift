import SQLKit
import VaneCore

/// The raw exposures and metric events apps send, stored once per id: a batch retried after a
/// timeout, or sent again after a relaunch, changes nothing the second time.
final class ExperimentEventStore: Sendable {
    let engine: DatabaseEngine

    init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// Stores the events whose ids are new and counts them in the sums of the `running`
    /// experiments they concern, in one transaction (all or none).
    /// - Returns: The ids stored now; the others were stored before.
    func insert(
        _ events: [ExperimentEvent],
        in environment: EnvironmentKey,
        running: [Experiment],
        receivedAt: Int64
    ) async throws -> Set<String> {
        guard !events.isEmpty else { return [] }
        let rows = events.map { event -> SQLQueryString in
            var experiment: String?
            var variant: String?
            var flagKey: String?
            var templateVersion: Int64?
            var metricName: String?
            var metricValue: Double?
            var properties: String?
            switch event.kind {
            case .exposure(let key, let name, let flag, let version):
                (experiment, variant, flagKey, templateVersion) = (key, name, flag, version)
            case .metric(let name, let value, let members):
                (metricName, metricValue) = (name, value)
                properties = members.map { JSONValue.object($0).serialized(.compact) }
            }
            let values: [any Encodable & Sendable] = [
                environment.projectId, environment.environmentId, event.id, event.typeName, event.unit, event.time,
                receivedAt, experiment, variant, flagKey, templateVersion, metricName, metricValue, properties,
            ]
            return "(\(binds: values))"
        }
        let kind = engine.kind
        return try await engine.transaction { database in
            let inserted = try await database.raw(
                """
                INSERT INTO experiment_events (project_id, environment_id, event_id, event_type, unit_id, event_time, \
                receive_time, experiment_key, variant, flag_key, template_version, metric_name, metric_value, properties) \
                VALUES \(rows.joined(separator: ", ")) \
                ON CONFLICT (project_id, environment_id, event_id) DO NOTHING RETURNING event_id
                """
            ).all(decodingColumn: "event_id", as: String.self)
            let stored = Set(inserted)
            // Only what is new counts: an id seen twice in the batch counts once.
            var counted: Set<String> = []
            let new = events.filter { stored.contains($0.id) && counted.insert($0.id).inserted }
            try await ExperimentTallyStore.apply(new, to: running, in: environment, database: database, kind: kind)
            return stored
        }
    }

    /// Where an export stopped: the last event written (events are ordered by time, then id).
    struct ExportCursor: Sendable, Hashable {
        var time: Int64
        var id: String
    }

    /// One page of an experiment's raw events, oldest first: its exposures and the metric events
    /// its metrics read, received since it was created, within [`since`, `until`).
    func exportPage(
        _ experiment: Experiment,
        since: Int64?,
        until: Int64?,
        after cursor: ExportCursor?,
        limit: Int
    ) async throws -> [StoredExperimentEvent] {
        let environment = experiment.environment
        let names = ExperimentAggregation.eventNames(experiment.definition).sorted()
        var filters: [SQLQueryString] = [
            "project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId)",
            """
            ((event_type = 'exposure' AND experiment_key = \(bind: experiment.key)) \
            OR (event_type = 'metric' AND metric_name IN (\(binds: names))))
            """,
            "receive_time >= \(bind: experiment.createTime)",
        ]
        if let since { filters.append("event_time >= \(bind: since)") }
        if let until { filters.append("event_time < \(bind: until)") }
        if let cursor {
            filters.append(
                "(event_time > \(bind: cursor.time) OR (event_time = \(bind: cursor.time) AND event_id > \(bind: cursor.id)))"
            )
        }
        let condition = filters.joined(separator: " AND ")
        return try await engine.withSession { database in
            try await database.raw(
                """
                SELECT event_id, event_type, unit_id, event_time, receive_time, experiment_key, variant, flag_key, \
                template_version, metric_name, metric_value, properties FROM experiment_events \
                WHERE \(condition) ORDER BY event_time, event_id LIMIT \(bind: limit)
                """
            ).all().map(Self.storedEvent)
        }
    }

    /// Deletes raw events that happened before `cutoff`; the experiments' sums keep counting them.
    func deleteEvents(before cutoff: Int64) async throws {
        try await engine.withSession { database in
            try await database.raw("DELETE FROM experiment_events WHERE event_time < \(bind: cutoff)").run()
        }
    }

    private static func storedEvent(_ row: any SQLRow) throws -> StoredExperimentEvent {
        let kind: ExperimentEvent.Kind
        if try row.decode(column: "event_type", as: String.self) == "exposure" {
            kind = .exposure(
                experiment: try row.decode(column: "experiment_key", as: String.self),
                variant: try row.decode(column: "variant", as: String.self),
                flagKey: try row.decode(column: "flag_key", as: String?.self),
                templateVersion: try row.decode(column: "template_version", as: Int64?.self)
            )
        } else {
            let properties = try row.decode(column: "properties", as: String?.self).flatMap {
                try? JSONValue.parse($0).objectValue
            }
            kind = .metric(
                name: try row.decode(column: "metric_name", as: String.self),
                value: try row.decode(column: "metric_value", as: Double.self),
                properties: properties
            )
        }
        return StoredExperimentEvent(
            event: ExperimentEvent(
                id: try row.decode(column: "event_id", as: String.self),
                unit: try row.decode(column: "unit_id", as: String.self),
                time: try row.decode(column: "event_time", as: Int64.self),
                kind: kind
            ),
            receiveTime: try row.decode(column: "receive_time", as: Int64.self)
        )
    }

    /// How many events of each type an environment holds.
    func counts(_ environment: EnvironmentKey) async throws -> [String: Int] {
        try await engine.withSession { database in
            var counts: [String: Int] = [:]
            for row in try await database.raw(
                """
                SELECT event_type, COUNT(*) AS n FROM experiment_events \
                WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) \
                GROUP BY event_type
                """
            ).all() {
                counts[try row.decode(column: "event_type", as: String.self)] = try row.decode(
                    column: "n",
                    as: Int.self
                )
            }
            return counts
        }
    }
}

/// An event as stored: what the app sent and when the server received it.
struct StoredExperimentEvent: Sendable, Hashable {
    var event: ExperimentEvent
    var receiveTime: Int64

    /// The event as `POST …/events` takes it, plus `receiveTime`: one line of an export.
    var json: JSONObject {
        var object: JSONObject = [
            "id": .string(event.id), "type": .string(event.typeName), "unit": .string(event.unit),
            "time": .string(Clock.rfc3339(milliseconds: event.time)),
            "receiveTime": .string(Clock.rfc3339(milliseconds: receiveTime)),
        ]
        switch event.kind {
        case .exposure(let experiment, let variant, let flagKey, let templateVersion):
            object["experiment"] = .string(experiment)
            object["variant"] = .string(variant)
            if let flagKey { object["flagKey"] = .string(flagKey) }
            if let templateVersion { object["templateVersion"] = .string(String(templateVersion)) }
        case .metric(let name, let value, let properties):
            object["name"] = .string(name)
            object["value"] = .number(JSONNumber(value))
            if let properties { object["properties"] = .object(properties) }
        }
        return object
    }
}
