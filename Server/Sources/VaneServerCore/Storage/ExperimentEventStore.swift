import SQLKit
import Synchronization
package import VaneCore

/// The raw exposures and metric events apps send, stored once per id: a batch retried after a
/// timeout, or sent again after a relaunch, changes nothing the second time.
package final class ExperimentEventStore: Sendable {
    package let engine: DatabaseEngine
    /// Whether this store has made sure PostgreSQL has statistics for the event tables.
    private let statisticsChecked = Atomic<Bool>(false)
    /// The environments' numbers in the event tables.
    private let numbers = EventEnvironment.Numbers()

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// The events one ``insert(_:rows:in:running:receivedAt:)`` stored.
    package enum Stored: Sendable, Equatable {
        /// Every event given: their ids were all new and all different (the common case, told
        /// apart so that no set of ids is made).
        case all
        /// The events with these ids; the others were stored before, or are the same id again.
        case only(Set<String>)
    }

    /// Stores the events whose ids are new and counts them in the sums of the `running`
    /// experiments they concern, in one transaction (all or none).
    /// - Returns: What was stored now (the others were stored before), and how long the commit
    ///   took, which tells ``EventIngestor`` how its groups should form.
    /// - Parameter rows: `events` as ``Rows``, written by the caller (the ingestor's requests
    ///   write their own, outside the group's one writer).
    package func insert(
        _ events: [ExperimentEvent],
        rows: Rows,
        in environment: EnvironmentKey,
        running: [Experiment],
        receivedAt: Int64
    ) async throws -> (stored: Stored, commit: Duration) {
        guard !events.isEmpty else { return (.only([]), .zero) }
        let kind = engine.kind
        let environment = try await numbers.environment(environment, engine: engine)
        let source = JSONBinds.select(
            constants: [environment.number, receivedAt],
            columns: [.text, .text, .text, .integer, .text, .text, .text, .integer, .text, .real, .text],
            rows: rows.json,
            kind: kind
        )
        let insert: SQLQueryString = """
            INSERT INTO experiment_events (environment_number, receive_time, event_id, event_type, unit_id, \
            event_time, experiment_key, variant, flag_key, template_version, metric_name, metric_value, properties) \
            \(source) ON CONFLICT (environment_number, event_id) DO NOTHING
            """
        let (stored, worked) = try await engine.transaction { database in
            // How many rows the insert stored, and where they are, for the counting's reads of
            // the earlier ones. Rows returned one by one would cost more than the insert itself.
            let count: Int64
            let batch: ExperimentTallyStore.BatchRows
            switch kind {
            case .sqlite:
                // Ids are rarely stored already, so the counting first takes every event as new:
                // it reads before the insert and counts off the connection's thread while the
                // insert runs there. When some ids were stored before, it counts again below.
                let countings = try await ExperimentTallyStore.read(
                    events,
                    to: running,
                    in: environment,
                    batch: .notYetStored,
                    database: database,
                    kind: kind
                )
                async let counted = withTaskExecutorPreference(globalConcurrentExecutor) {
                    try ExperimentTallyStore.count(countings, kind: kind)
                }
                try await database.raw(insert).run()
                // One row, always (a SELECT without FROM). A rowid table numbers new rows one
                // above its largest, so the rows this insert stored are the last `changes()` rowids.
                let row = try await database.raw("SELECT changes() AS stored, last_insert_rowid() AS last").first()
                count = try row?.decode(column: "stored", as: Int64.self) ?? 0
                batch = .storedFrom((try row?.decode(column: "last", as: Int64.self) ?? 0) - count + 1)
                if count == Int64(events.count) {
                    try await ExperimentTallyStore.write(try await counted, database: database, kind: kind)
                    return (Stored.all, ContinuousClock.now)
                }
            case .postgres:
                let row = try await database.raw(
                    "WITH inserted AS (\(insert) RETURNING 1) SELECT count(*) AS stored FROM inserted"
                ).first()
                count = try row?.decode(column: "stored", as: Int64.self) ?? 0
                batch = .storedByThisTransaction(receivedAt: receivedAt)
            }
            let stored: Stored
            if count == Int64(events.count) {
                stored = .all
            } else if count == 0 {
                stored = .only([])
            } else {
                stored = .only(
                    try await Self.ids(
                        events.map(\.id),
                        storedWhere: "environment_number = \(bind: environment.number) AND \(batch.condition)",
                        database: database,
                        kind: kind
                    )
                )
            }
            // Only what is new counts: an id seen twice in the batch counts once.
            let new: [ExperimentEvent]
            switch stored {
            case .all: new = events
            case .only(let ids):
                var counted: Set<String> = []
                new = events.filter { ids.contains($0.id) && counted.insert($0.id).inserted }
            }
            try await ExperimentTallyStore.apply(
                new,
                to: running,
                in: environment,
                batch: batch,
                database: database,
                kind: kind
            )
            return (stored, ContinuousClock.now)
        }
        let commit = ContinuousClock.now - worked
        if kind == .postgres { await gatherStatisticsIfMissing() }
        return (stored, commit)
    }

    /// Which of `ids` the environment holds already.
    package func storedIds(_ ids: [String], in environment: EnvironmentKey) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let kind = engine.kind
        return try await engine.withSession { database in
            try await Self.ids(ids, storedWhere: EventEnvironment.rows(of: environment), database: database, kind: kind)
        }
    }

    /// Which of `ids` are stored in the rows of `experiment_events` that `condition` selects.
    private static func ids(
        _ ids: [String],
        storedWhere condition: SQLQueryString,
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws -> Set<String> {
        Set(
            try await database.raw(
                """
                SELECT event_id FROM experiment_events WHERE \(condition) \
                AND \(JSONBinds.column("event_id", in: ids, kind: kind))
                """
            ).all(decodingColumn: "event_id", as: String.self)
        )
    }

    /// Events as the JSON array of rows the insert binds: `[id, type, unit, time, experiment,
    /// variant, flagKey, templateVersion, metricName, metricValue, properties]`, `null` where a
    /// column is empty.
    ///
    /// Each request writes its own batch's rows while the group before it is stored; the group's
    /// writer only joins them (``joined(_:)``), so its one transaction at a time waits for less.
    package struct Rows: Sendable {
        /// The array's text.
        package let json: String

        package init(_ events: [ExperimentEvent]) {
            var writer = JSONWriter(reservingCapacity: events.count * 160)
            writer.beginArray()
            for event in events {
                writer.beginArray()
                writer.string(event.id)
                writer.string(event.typeName)
                writer.string(event.unit)
                writer.value(.number(JSONNumber(Int(event.time))))
                switch event.kind {
                case .exposure(let experiment, let variant, let flagKey, let templateVersion):
                    writer.string(experiment)
                    writer.string(variant)
                    ExperimentEventStore.optional(flagKey, &writer)
                    if let templateVersion {
                        writer.value(.number(JSONNumber(Int(templateVersion))))
                    } else {
                        writer.null()
                    }
                    writer.null()
                    writer.null()
                    writer.null()
                case .metric(let name, let value, let properties):
                    writer.null()
                    writer.null()
                    writer.null()
                    writer.null()
                    writer.string(name)
                    writer.value(.number(JSONNumber(value)))
                    ExperimentEventStore.optional(properties.map { JSONValue.object($0).serialized(.compact) }, &writer)
                }
                writer.endArray()
            }
            writer.endArray()
            json = String(decoding: writer.bytes, as: UTF8.self)
        }

        private init(json: String) {
            self.json = json
        }

        /// One array holding every row of `parts`, in order.
        package static func joined(_ parts: [Rows]) -> Rows {
            guard parts.count > 1 else { return parts.first ?? Rows(json: "[]") }
            var json = ""
            json.reserveCapacity(parts.reduce(0) { $0 + $1.json.utf8.count })
            json += "["
            for part in parts {
                // Each part is `[row,…]`: its rows without the brackets, after a comma.
                let rows = part.json.utf8.dropFirst().dropLast()
                guard !rows.isEmpty else { continue }
                if json.utf8.count > 1 { json += "," }
                json += Substring(rows)
            }
            json += "]"
            return Rows(json: json)
        }
    }

    private static func optional(_ text: String?, _ writer: inout JSONWriter) {
        if let text { writer.string(text) } else { writer.null() }
    }

    /// PostgreSQL plans the per-unit lookups of ``ExperimentTallyStore`` from the tables'
    /// statistics, and has none until autovacuum first analyzes them, a minute or more after
    /// events start to arrive. Without them it reads a whole environment's events for each
    /// batch (0.5 s instead of 1 ms at 100,000 events). So the first batch this process stores
    /// analyzes the tables when nothing has yet; autovacuum keeps them current afterwards.
    private func gatherStatisticsIfMissing() async {
        guard !statisticsChecked.exchange(true, ordering: .relaxed) else { return }
        // Best effort: the events are stored; without statistics only speed suffers.
        try? await engine.withSession { database in
            let missing = try await database.raw(
                """
                SELECT relname FROM pg_stat_user_tables WHERE relname IN ('experiment_events', 'experiment_units') \
                AND last_analyze IS NULL AND last_autoanalyze IS NULL
                """
            ).all()
            guard !missing.isEmpty else { return }
            try await database.raw("ANALYZE experiment_events, experiment_units").run()
        }
    }

    /// Where an export stopped: the last event written (events are ordered by receipt, then id).
    package struct ExportCursor: Sendable, Hashable {
        package var receiveTime: Int64
        package var id: String

        package init(receiveTime: Int64, id: String) {
            self.receiveTime = receiveTime
            self.id = id
        }
    }

    /// One page of an experiment's raw events in the order the server received them (a batch's
    /// events by id), that happened within [`since`, `until`): exactly the events that can count
    /// for it — its exposures, and the metric events its metrics read of the units it exposed,
    /// whenever they were received (a unit's events stored before its exposure count from it).
    /// Other units' events with the same names belong to other experiments.
    ///
    /// Receipt order, not event time: events arrive days late from apps that were offline, and
    /// an order by receipt is one a later export can continue without missing them.
    package func exportPage(
        _ experiment: Experiment,
        since: Int64?,
        until: Int64?,
        after cursor: ExportCursor?,
        limit: Int
    ) async throws -> [StoredExperimentEvent] {
        let environment = experiment.environment
        let names = ExperimentAggregation.eventNames(experiment.definition).sorted()
        var filters: [SQLQueryString] = [
            EventEnvironment.rows(of: environment),
            // The units it exposed are those with a state in experiment_units (written as their
            // exposures are counted): one lookup in its primary key per metric event read.
            """
            ((event_type = 'exposure' AND experiment_key = \(bind: experiment.key)) \
            OR (event_type = 'metric' AND metric_name IN (\(binds: names)) AND EXISTS (SELECT 1 FROM experiment_units u \
            WHERE u.environment_number = experiment_events.environment_number \
            AND u.experiment_key = \(bind: experiment.key) AND u.unit_id = experiment_events.unit_id)))
            """,
        ]
        if let since { filters.append("event_time >= \(bind: since)") }
        if let until { filters.append("event_time < \(bind: until)") }
        if let cursor {
            filters.append(
                // A row value, so both databases seek the receipt index to the cursor.
                "(receive_time, event_id) > (\(bind: cursor.receiveTime), \(bind: cursor.id))"
            )
        }
        let condition = filters.joined(separator: " AND ")
        return try await engine.withSession { database in
            try await database.raw(
                """
                SELECT event_id, event_type, unit_id, event_time, receive_time, experiment_key, variant, flag_key, \
                template_version, metric_name, metric_value, properties FROM experiment_events \
                WHERE \(condition) ORDER BY receive_time, event_id LIMIT \(bind: limit)
                """
            ).all().map(Self.storedEvent)
        }
    }

    /// Deletes raw events received before `cutoff`; the experiments' sums keep counting them.
    /// One environment at a time, so each delete reads the receipt index
    /// (`experiment_events_by_receipt`).
    package func deleteEvents(receivedBefore cutoff: Int64) async throws {
        let numbers = try await engine.withSession { database in
            try await database.raw("SELECT number FROM event_environments ORDER BY number").all(
                decodingColumn: "number",
                as: Int64.self
            )
        }
        for number in numbers {
            try await engine.withSession { database in
                try await database.raw(
                    """
                    DELETE FROM experiment_events WHERE environment_number = \(bind: number) \
                    AND receive_time < \(bind: cutoff)
                    """
                ).run()
            }
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
    package func counts(_ environment: EnvironmentKey) async throws -> [String: Int] {
        try await engine.withSession { database in
            var counts: [String: Int] = [:]
            for row in try await database.raw(
                """
                SELECT event_type, COUNT(*) AS n FROM experiment_events \
                WHERE \(EventEnvironment.rows(of: environment)) GROUP BY event_type
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
package struct StoredExperimentEvent: Sendable, Hashable {
    package var event: ExperimentEvent
    package var receiveTime: Int64

    /// The event as `POST …/events` takes it, plus `receiveTime`: one line of an export.
    package var json: JSONObject {
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
