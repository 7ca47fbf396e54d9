import Logging
import SQLKit
import Testing

@testable import VaneServerCore

/// Migrations 18 and 19 key the event tables by a number per environment (``EventEnvironment``):
/// what a database stored before keeps its environment, and numbers are given once.
@Suite struct EventEnvironmentNumberTests {
    static let prod = EnvironmentKey(projectId: "app", environmentId: "prod")
    static let staging = EnvironmentKey(projectId: "app", environmentId: "staging")

    static func openEngine(_ location: DatabaseLocation) async throws -> DatabaseEngine {
        var logger = Logger(label: "vane-event-numbers-test")
        logger.logLevel = .warning
        return try await DatabaseEngine.open(location, logger: logger)
    }

    /// Brings a fresh database to the schema of migration 17, as a server released before
    /// migration 18 left it.
    static func migrate(_ engine: DatabaseEngine, through version: Int) async throws {
        try await engine.transaction { database in
            try await database.raw(
                "CREATE TABLE vane_schema_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, applied_time BIGINT NOT NULL)"
            ).run()
            for migration in Migrations.all where migration.version <= version {
                if migration.engine == nil || migration.engine == engine.kind {
                    for statement in migration.statements { try await database.raw(SQLQueryString(statement)).run() }
                }
                try await database.raw(
                    """
                    INSERT INTO vane_schema_migrations (version, description, applied_time) \
                    VALUES (\(bind: migration.version), \(bind: migration.description), 0)
                    """
                ).run()
            }
        }
    }

    /// An event row as migration 17's table holds it.
    static func storeBefore(
        _ id: String,
        _ type: String,
        unit: String,
        receivedAt: Int64,
        in environment: EnvironmentKey,
        _ database: any SQLDatabase
    ) async throws {
        let experiment: String? = type == "exposure" ? "checkout" : nil
        let variant: String? = type == "exposure" ? "new" : nil
        let name: String? = type == "metric" ? "purchase" : nil
        let value: Double? = type == "metric" ? 12.5 : nil
        try await database.raw(
            """
            INSERT INTO experiment_events (project_id, environment_id, event_id, event_type, unit_id, event_time, \
            receive_time, experiment_key, variant, metric_name, metric_value) VALUES (\(bind: environment.projectId), \
            \(bind: environment.environmentId), \(bind: id), \(bind: type), \(bind: unit), \(bind: receivedAt - 10), \
            \(bind: receivedAt), \(bind: experiment), \(bind: variant), \(bind: name), \(bind: value))
            """
        ).run()
    }

    static func metric(_ id: String, unit: String) -> ExperimentEvent {
        ExperimentEvent(id: id, unit: unit, time: 5_000, kind: .metric(name: "purchase", value: 3, properties: nil))
    }

    @Test(arguments: TestDatabase.allCases)
    func eventsAndUnitsStoredBeforeKeepTheirEnvironment(database: TestDatabase) async throws {
        let engine = try await Self.openEngine(try await database.freshLocation())
        do {
            try await Self.migrate(engine, through: 17)
            try await engine.transaction { database in
                // The same event id and unit in two environments are two events and two units.
                try await Self.storeBefore("e1", "exposure", unit: "u1", receivedAt: 1_000, in: Self.prod, database)
                try await Self.storeBefore("e2", "metric", unit: "u1", receivedAt: 1_000, in: Self.prod, database)
                try await Self.storeBefore("e3", "metric", unit: "u2", receivedAt: 2_000, in: Self.prod, database)
                try await Self.storeBefore("e1", "exposure", unit: "u1", receivedAt: 1_500, in: Self.staging, database)
                for (environment, variant) in [(Self.prod, "new"), (Self.staging, "control")] {
                    try await database.raw(
                        """
                        INSERT INTO experiment_units (project_id, environment_id, experiment_key, unit_id, variant, \
                        first_exposure, several_variants, totals) VALUES (\(bind: environment.projectId), \
                        \(bind: environment.environmentId), 'checkout', 'u1', \(bind: variant), 990, 0, 'purchase 1 12.5')
                        """
                    ).run()
                }
            }
            try await Migrations.run(on: engine)

            let events = ExperimentEventStore(engine: engine)
            #expect(try await events.counts(Self.prod) == ["exposure": 1, "metric": 2])
            #expect(try await events.counts(Self.staging) == ["exposure": 1])
            #expect(try await events.storedIds(["e1", "e2", "e4"], in: Self.prod) == ["e1", "e2"])
            #expect(try await events.storedIds(["e2", "e3"], in: Self.staging) == [])

            // A retried id stays stored once; a new one is stored, in its own environment only.
            let batch = [Self.metric("e1", unit: "u1"), Self.metric("e4", unit: "u1")]
            let stored = try await events.insert(
                batch,
                rows: ExperimentEventStore.Rows(batch),
                in: Self.prod,
                running: [],
                receivedAt: 3_000
            ).stored
            #expect(stored == .only(["e4"]))
            #expect(try await events.counts(Self.prod) == ["exposure": 1, "metric": 3])
            #expect(try await events.counts(Self.staging) == ["exposure": 1])

            // Each environment's unit kept its own state.
            let units = try await engine.withSession { database in
                try await database.raw(
                    """
                    SELECT n.environment_id, u.unit_id, u.variant, u.totals FROM experiment_units u \
                    JOIN event_environments n ON n.number = u.environment_number ORDER BY n.environment_id
                    """
                ).all().map {
                    [
                        try $0.decode(column: "environment_id", as: String.self),
                        try $0.decode(column: "unit_id", as: String.self),
                        try $0.decode(column: "variant", as: String.self),
                        try $0.decode(column: "totals", as: String.self),
                    ]
                }
            }
            #expect(
                units == [["prod", "u1", "new", "purchase 1 12.5"], ["staging", "u1", "control", "purchase 1 12.5"]]
            )

            // Retention reaches every environment by its number.
            try await events.deleteEvents(receivedBefore: 1_600)
            #expect(try await events.counts(Self.prod) == ["metric": 2])
            #expect(try await events.counts(Self.staging) == [:])
            #expect(try await events.storedIds(["e1", "e3", "e4"], in: Self.prod) == ["e3", "e4"])
        } catch {
            try? await engine.shutdown()
            throw error
        }
        try await engine.shutdown()
    }

    /// Nodes sharing a database give an environment its number at the same moment: they agree
    /// on one, and each environment has its own.
    @Test(arguments: TestDatabase.allCases)
    func nodesGivingNumbersAtOnceAgree(database: TestDatabase) async throws {
        let engine = try await Self.openEngine(try await database.freshLocation())
        do {
            try await Migrations.run(on: engine)
            let keys = (0..<4).map { EnvironmentKey(projectId: "app", environmentId: "env\($0)") }
            let given = try await withThrowingTaskGroup(of: EventEnvironment.self) { group in
                for key in keys {
                    for _ in 0..<4 {
                        // A node of its own: nothing it has read before.
                        group.addTask { try await EventEnvironment.Numbers().environment(key, engine: engine) }
                    }
                }
                return try await group.reduce(into: [EventEnvironment]()) { $0.append($1) }
            }
            let numbers = Dictionary(grouping: given, by: \.key).mapValues { Set($0.map(\.number)) }
            #expect(numbers.count == 4)
            #expect(numbers.values.allSatisfy { $0.count == 1 }, "\(numbers)")
            #expect(Set(numbers.values.compactMap(\.first)).count == 4, "\(numbers)")
            // Read again later, by another node: the same.
            for key in keys {
                let again = try await EventEnvironment.Numbers().environment(key, engine: engine)
                #expect(numbers[key] == [again.number])
            }
        } catch {
            try? await engine.shutdown()
            throw error
        }
        try await engine.shutdown()
    }
}
