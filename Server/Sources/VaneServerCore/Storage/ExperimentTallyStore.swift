package import ExperimentStatistics
import Foundation
package import SQLKit
import VaneCore

/// Keeps each running experiment's sums (``ExperimentTally``) and per-unit state
/// (``ExperimentUnit``) up to date as events arrive, inside the transaction that stores the
/// events: results then cost the same for a thousand events or a hundred million.
///
/// A batch costs a few statements per experiment it touches, whatever its size: lock and read
/// the tally, read the units it names, replay the stored events of newly exposed units, write the
/// changed units and the tally. Batches that touch one experiment take turns on its tally row
/// (`FOR UPDATE` on PostgreSQL; `BEGIN IMMEDIATE` serializes SQLite writers). The reads, the
/// counting and the writes are separate steps (``read(_:to:in:batch:database:kind:)``,
/// ``count(_:kind:)``, ``write(_:database:kind:)``), so that on SQLite the counting runs beside the
/// events' insert (``ExperimentEventStore``).
///
/// Every change of the sums is a look at the experiment: its running always-valid readings
/// (``AlwaysValidHistory``, migration 11) take it in the same statement, so the smallest p-value
/// and the narrowest intervals any look gave are kept whether or not anyone read the results then.
package enum ExperimentTallyStore {
    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()
    /// What the last texts read or written decode to (``DecodedStateCache``).
    private static let decodedStates = DecodedStateCache()
    /// The readings' intervals may be unbounded, which plain JSON cannot hold.
    private static let historyEncoder = {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf",
            negativeInfinity: "-inf",
            nan: "nan"
        )
        return encoder
    }()
    private static let historyDecoder = {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf",
            negativeInfinity: "-inf",
            nan: "nan"
        )
        return decoder
    }()

    /// An experiment's stored state: its sums and the running always-valid readings.
    package struct Stored: Sendable {
        package var tally = ExperimentTally()
        package var history = AlwaysValidHistory()
    }

    /// A stored tally or unit that no longer reads (written by another version of vane, or edited
    /// in the database).
    package struct UnreadableState: Error, CustomStringConvertible {
        package var experiment: String
        package var what: String
        package var description: String {
            "the stored \(what) of experiment \"\(experiment)\" cannot be read; "
                + "it was written by another version of vane or changed in the database"
        }
    }

    /// Where a batch's own rows are when its counting reads the stored events. The counting
    /// reads only the earlier rows and takes the batch's metric events as they are, rather than
    /// reading them back.
    package enum BatchRows: Sendable {
        /// Not stored yet: every stored row is an earlier one (SQLite, counting beside the
        /// insert).
        case notYetStored
        /// Stored from this rowid on (SQLite).
        case storedFrom(Int64)
        /// Stored by the current transaction, received at this time (PostgreSQL). A row's `xmin`
        /// is the transaction that stored it; the receive time keeps out a row stored four
        /// billion transactions ago, when transaction ids last had the same 32 bits.
        case storedByThisTransaction(receivedAt: Int64)

        /// The condition on `experiment_events` that holds for the batch's stored rows only.
        package var condition: SQLQueryString {
            switch self {
            case .notYetStored: "FALSE"
            case .storedFrom(let rowid): "rowid >= \(bind: rowid)"
            case .storedByThisTransaction(let receivedAt):
                "xmin = pg_current_xact_id()::xid AND receive_time = \(bind: receivedAt)"
            }
        }
    }

    /// What counting a batch for one experiment needs, read in the events' transaction.
    package struct Counting: Sendable {
        fileprivate var scope: Scope
        /// The environment's number in the units' table.
        fileprivate var environmentNumber: Int64
        fileprivate var definition: ExperimentDefinition
        fileprivate var stored: Stored
        fileprivate var units: [String: ExperimentUnit]
        fileprivate var exposures: [ExperimentAggregation.Exposure]
        fileprivate var metrics: [ExperimentAggregation.MetricEvent]
        fileprivate var replayed: [String: [ExperimentAggregation.MetricEvent]]
        fileprivate var withoutFetch: Int
    }

    /// The statements that store one experiment's counting.
    package struct CountedWrites: Sendable {
        fileprivate var units: SQLQueryString?
        fileprivate var tally: SQLQueryString
    }

    /// Applies newly stored events to the running experiments they concern.
    /// - Parameter batch: Where `events`' rows are.
    package static func apply(
        _ events: [ExperimentEvent],
        to running: [Experiment],
        in environment: EventEnvironment,
        batch: BatchRows,
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws {
        let countings = try await read(
            events,
            to: running,
            in: environment,
            batch: batch,
            database: database,
            kind: kind
        )
        try await write(try count(countings, kind: kind), database: database, kind: kind)
    }

    /// Reads what counting `events` needs for each of the `running` experiments they concern, in
    /// the order batches lock them; an experiment stopped since the caller's list was read is left
    /// out.
    package static func read(
        _ events: [ExperimentEvent],
        to running: [Experiment],
        in environment: EventEnvironment,
        batch: BatchRows,
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws -> [Counting] {
        var versions = Set<Int64>()
        for event in events {
            if case .exposure(_, _, _, let version?) = event.kind { versions.insert(version) }
        }
        let unserved = try await ServedVersionLog.unserved(versions, in: environment.key, database: database)
        var countings: [Counting] = []
        // Sorted, so batches touching several experiments lock them in one order (no deadlock).
        for experiment in running.sorted(by: { $0.key < $1.key }) {
            let definition = experiment.definition
            let names = ExperimentAggregation.eventNames(definition)
            var exposures: [ExperimentAggregation.Exposure] = []
            var metrics: [ExperimentAggregation.MetricEvent] = []
            var withoutFetch = 0
            for event in events {
                switch event.kind {
                case .exposure(let key, let variant, _, let version) where key == experiment.key:
                    exposures.append(.init(unit: event.unit, variant: variant, time: event.time))
                    if let version, unserved.contains(version) { withoutFetch += 1 }
                case .metric(let name, let value, _) where names.contains(name):
                    metrics.append(.init(unit: event.unit, name: name, time: event.time, value: value))
                default:
                    break
                }
            }
            guard !exposures.isEmpty || !metrics.isEmpty else { continue }
            let scope = Scope(environment: environment.key, experiment: experiment.key)
            // The caller's list may be a second old (ExperimentStore.runningExperiments): an
            // experiment stopped since, on any node, counts nothing more.
            guard let stored = try await lockTallyIfRunning(scope, database: database, kind: kind) else { continue }
            let unitKeys = Set(exposures.map(\.unit)).union(metrics.map(\.unit))
            let units = try await readUnits(
                unitKeys.sorted(),
                of: experiment.key,
                in: environment,
                database: database,
                kind: kind
            )
            let replay = ExperimentAggregation.unitsToReplay(units, exposures: exposures)
            var replayed = try await storedMetricEvents(
                of: Array(replay),
                names: names,
                in: environment,
                batch: batch,
                database: database,
                kind: kind
            )
            // The batch's own events, after the earlier ones.
            for event in metrics where replay.contains(event.unit) {
                replayed[event.unit, default: []].append(event)
            }
            countings.append(
                Counting(
                    scope: scope,
                    environmentNumber: environment.number,
                    definition: definition,
                    stored: stored,
                    units: units,
                    exposures: exposures,
                    metrics: metrics,
                    replayed: replayed,
                    withoutFetch: withoutFetch
                )
            )
        }
        return countings
    }

    /// Counts each experiment's events into its sums and units (no database): the statements
    /// that store what changed.
    package static func count(_ countings: [Counting], kind: DatabaseEngine.Kind) throws -> [CountedWrites] {
        try countings.compactMap { counting -> CountedWrites? in
            var stored = counting.stored
            var units = counting.units
            let definition = counting.definition
            let changed = ExperimentAggregation.apply(
                definition,
                tally: &stored.tally,
                units: &units,
                exposures: counting.exposures,
                metrics: counting.metrics,
                replayed: counting.replayed
            )
            if counting.withoutFetch > 0 {
                stored.tally.exposuresWithoutFetch = (stored.tally.exposuresWithoutFetch ?? 0) + counting.withoutFetch
            }
            guard !changed.isEmpty || counting.withoutFetch > 0 else { return nil }
            if !changed.isEmpty {
                stored.history.recordLook(
                    stored.tally.aggregates(for: definition),
                    configuration: definition.analysisConfiguration
                )
            }
            let written = changed.compactMap { key in units[key].map { (key, $0) } }
            let tallyText = try text(stored.tally)
            let historyText = try historyText(stored.history)
            // The next group reads these texts back: it finds them decoded.
            decodedStates.remember(
                stored,
                of: counting.scope.environment,
                experiment: counting.scope.experiment,
                tally: tallyText,
                history: historyText
            )
            return CountedWrites(
                units: unitsUpsert(
                    written,
                    of: counting.scope.experiment,
                    environmentNumber: counting.environmentNumber,
                    kind: kind
                ),
                tally: """
                    UPDATE experiment_tallies SET tally = \(bind: tallyText), \
                    always_valid = \(bind: historyText), update_time = \(bind: Clock.nowMilliseconds()) \
                    WHERE \(counting.scope.condition)
                    """
            )
        }
    }

    /// Stores what ``count(_:kind:)`` counted.
    package static func write(
        _ writes: [CountedWrites],
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws {
        for write in writes {
            switch (kind, write.units) {
            case (.postgres, let upsert?):
                // One round trip while the tally's row is locked, not two.
                try await database.raw("WITH written AS (\(upsert)) \(write.tally)").run()
            case (_, let upsert):
                if let upsert { try await database.raw(upsert).run() }
                try await database.raw(write.tally).run()
            }
        }
    }

    /// An experiment's sums and readings; empty ones when no event has counted yet.
    package static func stored(
        _ environment: EnvironmentKey,
        experiment: String,
        database: any SQLDatabase
    ) async throws
        -> Stored
    {
        let scope = Scope(environment: environment, experiment: experiment)
        guard
            let row = try await database.raw(
                "SELECT tally, always_valid FROM experiment_tallies WHERE \(scope.condition)"
            ).first()
        else { return Stored() }
        return try read(row, scope)
    }

    private static func read(_ row: any SQLRow, _ scope: Scope) throws -> Stored {
        let tallyText = try row.decode(column: "tally", as: String.self)
        let historyText = try row.decode(column: "always_valid", as: String?.self)
        if let stored = decodedStates.stored(
            scope.environment,
            experiment: scope.experiment,
            tally: tallyText,
            history: historyText
        ) {
            return stored
        }
        let stored = try decoded(tally: tallyText, history: historyText, scope)
        decodedStates.remember(
            stored,
            of: scope.environment,
            experiment: scope.experiment,
            tally: tallyText,
            history: historyText
        )
        return stored
    }

    /// The state that stored texts hold, decoded (``DecodedStateCache`` spares most reads this).
    static func decoded(tally: String, history: String?, _ scope: Scope) throws -> Stored {
        var stored = Stored(tally: try decode(ExperimentTally.self, tally, scope, "sums"))
        if let history {
            do {
                stored.history = try historyDecoder.decode(AlwaysValidHistory.self, from: Data(history.utf8))
            } catch {
                throw UnreadableState(experiment: scope.experiment, what: "always-valid readings")
            }
        }
        return stored
    }

    private static func historyText(_ history: AlwaysValidHistory) throws -> String {
        String(decoding: try historyEncoder.encode(history), as: UTF8.self)
    }

    /// Where an experiment's rows are.
    package struct Scope: Sendable {
        package var environment: EnvironmentKey
        package var experiment: String

        package var condition: SQLQueryString {
            "project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) AND experiment_key = \(bind: experiment)"
        }
    }

    /// Locks the experiment's tally and reads it, when the experiment is still running; nil
    /// once it stopped.
    ///
    /// One statement reads both. On PostgreSQL the tally's row is locked `FOR UPDATE` and the
    /// experiment's `FOR SHARE`: a stop updates that row, so a stop committed while this waited
    /// is seen (PostgreSQL reads the newest version of a row it locks), and one in progress
    /// waits for this transaction. SQLite has one writer at a time.
    private static func lockTallyIfRunning(
        _ scope: Scope,
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws
        -> Stored?
    {
        let lock: SQLQueryString = kind == .postgres ? " FOR UPDATE OF t FOR SHARE OF x" : ""
        let select: SQLQueryString = """
            SELECT t.tally, t.always_valid, x.status FROM experiment_tallies t JOIN experiments x \
            ON x.project_id = t.project_id AND x.environment_id = t.environment_id AND x.experiment_key = t.experiment_key \
            WHERE t.project_id = \(bind: scope.environment.projectId) AND t.environment_id = \(bind: scope.environment.environmentId) \
            AND t.experiment_key = \(bind: scope.experiment)\(lock)
            """
        func read(_ row: any SQLRow) throws -> Stored? {
            guard try row.decode(column: "status", as: String.self) == ExperimentStatus.running.rawValue else {
                return nil
            }
            return try Self.read(row, scope)
        }
        if let row = try await database.raw(select).first() { return try read(row) }
        // The first events of the experiment: another node may be inserting the same row.
        try await database.raw(
            """
            INSERT INTO experiment_tallies (project_id, environment_id, experiment_key, tally, update_time) \
            VALUES (\(bind: scope.environment.projectId), \(bind: scope.environment.environmentId), \(bind: scope.experiment), \
            \(bind: try text(ExperimentTally())), \(bind: Clock.nowMilliseconds())) \
            ON CONFLICT (project_id, environment_id, experiment_key) DO NOTHING
            """
        ).run()
        // No row: the experiment was deleted (only drafts can be).
        guard let row = try await database.raw(select).first() else { return nil }
        return try read(row)
    }

    private static func readUnits(
        _ keys: [String],
        of experiment: String,
        in environment: EventEnvironment,
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws
        -> [String: ExperimentUnit]
    {
        guard !keys.isEmpty else { return [:] }
        var units: [String: ExperimentUnit] = [:]
        for row in try await database.raw(
            """
            SELECT unit_id, variant, first_exposure, several_variants, totals FROM experiment_units \
            WHERE environment_number = \(bind: environment.number) AND experiment_key = \(bind: experiment) \
            AND \(JSONBinds.column("unit_id", in: keys, kind: kind))
            """
        ).all() {
            let key = try row.decode(column: "unit_id", as: String.self)
            units[key] = ExperimentUnit(
                variant: try row.decode(column: "variant", as: String.self),
                firstExposure: try row.decode(column: "first_exposure", as: Int64.self),
                isInSeveralVariants: try row.decode(column: "several_variants", as: Int64.self) != 0,
                totals: try totals(
                    try row.decode(column: "totals", as: String.self),
                    experiment: experiment,
                    unit: key
                )
            )
        }
        return units
    }

    /// The statement that stores `units`' new state; nil when there are none.
    private static func unitsUpsert(
        _ units: [(key: String, unit: ExperimentUnit)],
        of experiment: String,
        environmentNumber: Int64,
        kind: DatabaseEngine.Kind
    ) -> SQLQueryString? {
        guard !units.isEmpty else { return nil }
        var writer = JSONWriter(reservingCapacity: units.count * 80)
        writer.beginArray()
        for (key, unit) in units {
            writer.beginArray()
            writer.string(key)
            writer.string(unit.variant)
            writer.value(.number(JSONNumber(Int(unit.firstExposure))))
            writer.value(.number(JSONNumber(unit.isInSeveralVariants ? 1 : 0)))
            writer.string(totalsText(unit.totals))
            writer.endArray()
        }
        writer.endArray()
        let source = JSONBinds.select(
            constants: [environmentNumber, experiment],
            columns: [.text, .text, .integer, .integer, .text],
            rows: String(decoding: writer.bytes, as: UTF8.self),
            kind: kind
        )
        return """
            INSERT INTO experiment_units (environment_number, experiment_key, unit_id, variant, first_exposure, \
            several_variants, totals) \(source) \
            ON CONFLICT (environment_number, experiment_key, unit_id) DO UPDATE SET \
            variant = excluded.variant, first_exposure = excluded.first_exposure, \
            several_variants = excluded.several_variants, totals = excluded.totals
            """
    }

    /// The metric events of `units` with one of `names` stored before `batch`, by unit.
    private static func storedMetricEvents(
        of units: [String],
        names: Set<String>,
        in environment: EventEnvironment,
        batch: BatchRows,
        database: any SQLDatabase,
        kind: DatabaseEngine.Kind
    ) async throws -> [String: [ExperimentAggregation.MetricEvent]] {
        guard !units.isEmpty, !names.isEmpty else { return [:] }
        var events: [String: [ExperimentAggregation.MetricEvent]] = [:]
        for row in try await database.raw(
            """
            SELECT unit_id, metric_name, event_time, metric_value FROM experiment_events \
            WHERE environment_number = \(bind: environment.number) \
            AND \(JSONBinds.column("unit_id", in: units, kind: kind)) AND event_type = 'metric' \
            AND metric_name IN (\(binds: names.sorted())) AND NOT (\(batch.condition))
            """
        ).all() {
            let unit = try row.decode(column: "unit_id", as: String.self)
            events[unit, default: []].append(
                ExperimentAggregation.MetricEvent(
                    unit: unit,
                    name: try row.decode(column: "metric_name", as: String.self),
                    time: try row.decode(column: "event_time", as: Int64.self),
                    value: try row.decode(column: "metric_value", as: Double.self)
                )
            )
        }
        return events
    }

    /// A unit's totals as stored: `name count sum` per event name, joined by `;`. Event names
    /// never hold a space or `;` (``ExperimentDefinitionReader/isValidName(_:)``), and a
    /// Double's description reads back exactly.
    /// Written for every unit a batch touches, so it is kept simpler than JSON.
    package static func totalsText(_ totals: [String: EventTotal]) -> String {
        totals.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.count) \($0.value.sum)" }.joined(separator: ";")
    }

    /// Reads ``totalsText(_:)``.
    package static func totals(_ text: String, experiment: String, unit: String) throws -> [String: EventTotal] {
        var totals: [String: EventTotal] = [:]
        for entry in text.split(separator: ";") {
            let parts = entry.split(separator: " ")
            guard parts.count == 3, let count = Int(parts[1]), let sum = Double(parts[2]) else {
                throw UnreadableState(experiment: experiment, what: "state of unit \"\(unit)\"")
            }
            totals[String(parts[0])] = EventTotal(count: count, sum: sum)
        }
        return totals
    }

    private static func text(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ text: String, _ scope: Scope, _ what: String) throws -> T
    {
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw UnreadableState(experiment: scope.experiment, what: what)
        }
    }
}
