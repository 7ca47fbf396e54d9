import NIOConcurrencyHelpers
package import SQLKit
import Synchronization
import VaneCore

/// Experiments and their life (draft → running → stopped), over SQLite and PostgreSQL. Every
/// change is one transaction with its audit entry.
///
/// Changes to one environment's experiments take turns: on PostgreSQL they lock the environment's
/// row (as publishes do), on SQLite `BEGIN IMMEDIATE` already serializes writers. So two
/// experiments on the same parameter cannot both start, on any number of nodes.
package final class ExperimentStore: Sendable {
    package let engine: DatabaseEngine

    /// The running experiments per environment, as `POST …/events` reads them on every batch.
    private let running = NIOLockedValueBox<[EnvironmentKey: RunningList]>([:])
    private let runningReads = Atomic<Int>(0)

    /// How many times this store has read a list of running experiments from the database.
    package var runningListReads: Int { runningReads.load(ordering: .relaxed) }
    /// How long a node trusts its list of running experiments. A start or stop on this node
    /// refreshes it at once; on another node it takes effect here within this time, and the
    /// events' transaction checks each experiment's status again before counting.
    package static let runningListLifetime = Duration.seconds(1)
    /// ``runningListLifetime``, or a test's longer one (a loaded machine can take a second
    /// between two reads a test means to be close together).
    private let listLifetime: Duration

    package init(engine: DatabaseEngine, runningListLifetime: Duration = ExperimentStore.runningListLifetime) {
        self.engine = engine
        self.listLifetime = runningListLifetime
    }

    /// Every running experiment's definition, by environment (for fetch, through
    /// `ExperimentLifecycle`).
    package func allRunning() async throws -> [EnvironmentKey: [ExperimentDefinition]] {
        let rows = try await engine.withSession { database in
            try await database.raw(
                "SELECT * FROM experiments WHERE status = \(bind: ExperimentStatus.running.rawValue)"
            )
            .all()
        }
        var running: [EnvironmentKey: [ExperimentDefinition]] = [:]
        for row in rows {
            let environment = EnvironmentKey(
                projectId: try row.decode(column: "project_id", as: String.self),
                environmentId: try row.decode(column: "environment_id", as: String.self)
            )
            running[environment, default: []].append(try Self.experiment(row, environment: environment).definition)
        }
        return running
    }

    /// The environment's running experiments, read at most once a second per node.
    ///
    /// Requests that find the list out of date share one read: under load every request in
    /// flight found it stale at the same moment, and each read on its own queued ahead of the
    /// events' transaction on SQLite's one connection.
    package func runningExperiments(_ environment: EnvironmentKey) async throws -> [Experiment] {
        let now = ContinuousClock.now
        let read = running.withLockedValue { lists -> RunningList.Read in
            var list = lists[environment] ?? RunningList()
            if let cached = list.cached, now - cached.readAt < listLifetime {
                return .cached(cached.experiments)
            }
            if let reading = list.reading { return .shared(reading) }
            let reading = RunningList.Reading(
                startedAt: now,
                task: Task {
                    self.runningReads.add(1, ordering: .relaxed)
                    return try await self.experiments(environment, status: .running)
                }
            )
            list.reading = reading
            lists[environment] = list
            return .shared(reading)
        }
        switch read {
        case .cached(let experiments):
            return experiments
        case .shared(let reading):
            let result = await reading.task.result
            running.withLockedValue { lists in
                // Kept unless the list was forgotten since.
                guard var list = lists[environment], list.reading?.task == reading.task else { return }
                list.reading = nil
                if case .success(let experiments) = result { list.cached = (reading.startedAt, experiments) }
                lists[environment] = list
            }
            return try result.get()
        }
    }

    /// Drops this node's list of the environment's running experiments, and any read of it in
    /// progress: an experiment started or stopped on this node.
    package func forgetRunning(_ environment: EnvironmentKey) {
        running.withLockedValue { $0[environment] = nil }
    }

    /// A stored definition that no longer reads (written by a newer server, or edited by hand).
    package struct UnreadableDefinition: Error, CustomStringConvertible {
        package var key: String
        package var problems: String
        package var description: String {
            "the stored definition of experiment \"\(key)\" cannot be read (\(problems)); "
                + "it was written by another version of vane or changed in the database"
        }
    }

    /// Stores a new experiment as a draft.
    /// - Throws: ``StorageError/environmentNotFound(project:environment:)``,
    ///   ``StorageError/experimentExists(_:)``.
    package func create(
        _ definition: ExperimentDefinition,
        in environment: EnvironmentKey,
        actor: Actor
    ) async throws
        -> Experiment
    {
        let experiment = Experiment(
            environment: environment,
            definition: definition,
            status: .draft,
            createTime: Clock.nowMilliseconds(),
            creator: actor.name
        )
        let text = JSONValue.object(ExperimentJSON.definition(definition)).serialized(.compact)
        let kind = engine.kind
        do {
            try await engine.transaction { database in
                try await ConfigStore.lockEnvironment(database, environment, kind: kind)
                try await database.raw(
                    """
                    INSERT INTO experiments (project_id, environment_id, experiment_key, definition, status, create_time, creator) \
                    VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \(bind: definition.key), \
                    \(bind: text), \(bind: ExperimentStatus.draft.rawValue), \(bind: experiment.createTime), \(bind: actor.name))
                    """
                ).run()
                try await ConfigStore.insertAudit(
                    database,
                    actor: actor,
                    action: .experimentCreate,
                    projectId: environment.projectId,
                    environmentId: environment.environmentId,
                    summary: "created experiment \(definition.key)",
                    details: [
                        "experiment": .string(definition.key),
                        "definition": .object(ExperimentJSON.definition(definition)),
                    ]
                )
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            throw StorageError.experimentExists(definition.key)
        }
        return experiment
    }

    /// An environment's experiments, newest first; only those with `status` when it is given.
    package func experiments(
        _ environment: EnvironmentKey,
        status: ExperimentStatus? = nil
    ) async throws -> [Experiment] {
        try await engine.withSession { database in
            let filter = status.map { SQLQueryString("AND status = \(bind: $0.rawValue)") } ?? SQLQueryString("")
            return try await database.raw(
                """
                SELECT * FROM experiments WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId) \(filter) \
                ORDER BY create_time DESC, experiment_key
                """
            ).all().map { try Self.experiment($0, environment: environment) }
        }
    }

    /// One experiment.
    package func experiment(_ environment: EnvironmentKey, key: String) async throws -> Experiment? {
        try await engine.withSession { database in
            try await Self.row(database, environment, key: key).map {
                try Self.experiment($0, environment: environment)
            }
        }
    }

    /// One experiment with its sums and running always-valid readings, read in one transaction so
    /// they agree.
    package func experimentWithTally(
        _ environment: EnvironmentKey,
        key: String
    ) async throws -> (Experiment, ExperimentTallyStore.Stored)? {
        try await engine.transaction { database in
            guard let row = try await Self.row(database, environment, key: key) else { return nil }
            let experiment = try Self.experiment(row, environment: environment)
            return (experiment, try await ExperimentTallyStore.stored(environment, experiment: key, database: database))
        }
    }

    /// Starts a draft: from now on its exposures and events count.
    /// - Parameter liveVersion: The template version it starts on (checked by the caller with
    ///   ``ExperimentTemplateCheck``).
    /// - Throws: ``StorageError/experimentNotFound(_:)``, ``StorageError/experimentStatus(key:status:action:)``,
    ///   ``StorageError/parameterInRunningExperiment(parameter:experiment:)``.
    package func start(
        _ environment: EnvironmentKey,
        key: String,
        liveVersion: Int64,
        actor: Actor,
        authorization: ChangeAuthorization
    ) async throws -> Experiment {
        try await change(
            environment,
            key: key,
            action: "start",
            from: .draft,
            actor: actor,
            authorization: authorization
        ) { database, experiment in
            let running = try await database.raw(
                """
                SELECT * FROM experiments WHERE project_id = \(bind: environment.projectId) \
                AND environment_id = \(bind: environment.environmentId) AND status = \(bind: ExperimentStatus.running.rawValue)
                """
            ).all().map { try Self.experiment($0, environment: environment) }
            for other in running {
                if let shared = experiment.definition.parameters.first(where: other.definition.parameters.contains) {
                    throw StorageError.parameterInRunningExperiment(parameter: shared, experiment: other.key)
                }
            }
            var started = experiment
            started.status = .running
            started.startTime = Clock.nowMilliseconds()
            started.startVersion = liveVersion
            return started
        }
    }

    /// Stops a running experiment: its results stay, nothing more counts.
    /// - Throws: ``StorageError/experimentNotFound(_:)``, ``StorageError/experimentStatus(key:status:action:)``.
    package func stop(
        _ environment: EnvironmentKey,
        key: String,
        actor: Actor,
        authorization: ChangeAuthorization
    ) async throws -> Experiment {
        try await change(
            environment,
            key: key,
            action: "stop",
            from: .running,
            actor: actor,
            authorization: authorization
        ) { _, experiment in
            var stopped = experiment
            stopped.status = .stopped
            stopped.stopTime = Clock.nowMilliseconds()
            return stopped
        }
    }

    private func change(
        _ environment: EnvironmentKey,
        key: String,
        action: String,
        from status: ExperimentStatus,
        actor: Actor,
        authorization: ChangeAuthorization,
        _ transform: @escaping @Sendable (any SQLDatabase, Experiment) async throws -> Experiment
    ) async throws -> Experiment {
        let kind = engine.kind
        defer { forgetRunning(environment) }
        return try await engine.transaction { database in
            try await ConfigStore.lockEnvironment(database, environment, kind: kind)
            guard let row = try await Self.row(database, environment, key: key) else {
                throw StorageError.experimentNotFound(key)
            }
            let experiment = try Self.experiment(row, environment: environment)
            guard experiment.status == status else {
                throw StorageError.experimentStatus(key: key, status: experiment.status.rawValue, action: action)
            }
            // The live version cannot move while the environment's row is locked: read it once, for
            // the change policy and for the webhook.
            let liveVersion = try await ConfigStore.currentVersion(database, environment)
            // A start or stop changes what clients get: the change policy, in this transaction.
            try await ChangeRequestStore.authorize(
                database,
                authorization,
                in: environment,
                kind: action == "start" ? "experiment_start" : "experiment_stop",
                actor: actor,
                liveVersion: liveVersion,
                publishes: false,
                engine: kind
            )
            let changed = try await transform(database, experiment)
            try await database.raw(
                """
                UPDATE experiments SET status = \(bind: changed.status.rawValue), start_time = \(bind: changed.startTime), \
                start_version = \(bind: changed.startVersion), stop_time = \(bind: changed.stopTime) \
                WHERE project_id = \(bind: environment.projectId) AND environment_id = \(bind: environment.environmentId) \
                AND experiment_key = \(bind: key)
                """
            ).run()
            var details: JSONObject = ["experiment": .string(key), "status": .string(changed.status.rawValue)]
            if let version = changed.startVersion, action == "start" {
                details["templateVersion"] = .string(String(version))
            }
            try await ConfigStore.insertAudit(
                database,
                actor: actor,
                action: action == "start" ? .experimentStart : .experimentStop,
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                summary: action == "start" ? "started experiment \(key)" : "stopped experiment \(key)",
                details: .object(details)
            )
            try await WebhookStore.enqueue(
                database,
                kind: kind,
                change: WebhookChange(
                    type: action == "start" ? .experimentStarted : .experimentStopped,
                    details: ["experiment": .string(key)]
                ),
                projectId: environment.projectId,
                environmentId: environment.environmentId,
                version: liveVersion,
                actor: actor
            )
            return changed
        }
    }

    private static func row(
        _ database: any SQLDatabase,
        _ environment: EnvironmentKey,
        key: String
    ) async throws
        -> (any SQLRow)?
    {
        try await database.raw(
            """
            SELECT * FROM experiments WHERE project_id = \(bind: environment.projectId) \
            AND environment_id = \(bind: environment.environmentId) AND experiment_key = \(bind: key)
            """
        ).first()
    }

    package static func experiment(_ row: any SQLRow, environment: EnvironmentKey) throws -> Experiment {
        let key = try row.decode(column: "experiment_key", as: String.self)
        let text = try row.decode(column: "definition", as: String.self)
        guard let object = (try? JSONValue.parse(text))?.objectValue else {
            throw UnreadableDefinition(key: key, problems: "not a JSON object")
        }
        let definition: ExperimentDefinition
        switch ExperimentDefinitionReader.read(object) {
        case .success(let read): definition = read
        case .failure(let error):
            throw UnreadableDefinition(key: key, problems: error.issues.map(\.description).joined(separator: "; "))
        }
        let statusText = try row.decode(column: "status", as: String.self)
        guard let status = ExperimentStatus(rawValue: statusText) else {
            throw UnreadableDefinition(key: key, problems: "unknown status \"\(statusText)\"")
        }
        return Experiment(
            environment: environment,
            definition: definition,
            status: status,
            createTime: try row.decode(column: "create_time", as: Int64.self),
            creator: try row.decode(column: "creator", as: String.self),
            startTime: try row.decode(column: "start_time", as: Int64?.self),
            startVersion: try row.decode(column: "start_version", as: Int64?.self),
            stopTime: try row.decode(column: "stop_time", as: Int64?.self)
        )
    }
}

/// What a node knows of one environment's running experiments.
private struct RunningList: Sendable {
    /// A read of the list, which every request that needs it meanwhile awaits.
    struct Reading: Sendable {
        var startedAt: ContinuousClock.Instant
        var task: Task<[Experiment], any Error>
    }

    /// How a request gets the list.
    enum Read: Sendable {
        case cached([Experiment])
        case shared(Reading)
    }

    var cached: (readAt: ContinuousClock.Instant, experiments: [Experiment])?
    /// Dropped when the list is forgotten, so a read that began before is not kept.
    var reading: Reading?
}
