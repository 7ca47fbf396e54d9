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
