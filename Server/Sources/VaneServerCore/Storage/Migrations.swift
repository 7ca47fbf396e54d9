import SQLKit

/// The versioned schema. Migrations run in order on start, each in its own transaction, and are
/// recorded in `vane_schema_migrations`; a migration never changes once released.
package enum Migrations {
    /// One schema change.
    package struct Migration: Sendable {
        package let version: Int
        package let description: String
        package let statements: [String]
        /// The one engine the statements are for; the version is recorded on the other too.
        package var engine: DatabaseEngine.Kind?
    }

    /// The same SQL runs on SQLite and PostgreSQL: TEXT, BIGINT and composite keys mean the same
    /// on both. Times are milliseconds since 1970.
    package static let all: [Migration] = [
        Migration(
            version: 1,
            description: "projects, environments, template versions, API keys, audit log",
            statements: [
                """
                CREATE TABLE projects (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    create_time BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE environments (
                    project_id TEXT NOT NULL REFERENCES projects(id),
                    id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    create_time BIGINT NOT NULL,
                    PRIMARY KEY (project_id, id)
                )
                """,
                """
                CREATE TABLE template_versions (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    version_number BIGINT NOT NULL,
                    update_time BIGINT NOT NULL,
                    update_type TEXT NOT NULL,
                    update_user TEXT NOT NULL,
                    description TEXT,
                    rollback_source BIGINT,
                    template TEXT NOT NULL,
                    PRIMARY KEY (project_id, environment_id, version_number),
                    FOREIGN KEY (project_id, environment_id) REFERENCES environments(project_id, id)
                )
                """,
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    role TEXT NOT NULL,
                    project_id TEXT,
                    environment_id TEXT,
                    key_hash TEXT NOT NULL UNIQUE,
                    create_time BIGINT NOT NULL,
                    revoke_time BIGINT
                )
                """,
                """
                CREATE TABLE audit_log (
                    id TEXT PRIMARY KEY,
                    time BIGINT NOT NULL,
                    sequence BIGINT NOT NULL,
                    actor_key_id TEXT,
                    actor_name TEXT NOT NULL,
                    action TEXT NOT NULL,
                    project_id TEXT,
                    environment_id TEXT,
                    summary TEXT NOT NULL,
                    details TEXT NOT NULL
                )
                """,
                "CREATE INDEX audit_log_scope ON audit_log (project_id, environment_id, time)",
                "CREATE INDEX template_versions_time ON template_versions (project_id, environment_id, update_time)",
            ]
        ),
        Migration(
            version: 2,
            description: "console users and sessions; audit entries name the person",
            statements: [
                // `environments`: the environments an editor may change, as a JSON array of
                // "project/environment", "project/*" or "*". `must_change_password` is 0 or 1
                // (BOOLEAN is spelled differently by the two engines' drivers).
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    email TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    role TEXT NOT NULL,
                    environments TEXT NOT NULL,
                    password_hash TEXT NOT NULL,
                    must_change_password BIGINT NOT NULL,
                    create_time BIGINT NOT NULL,
                    password_time BIGINT NOT NULL,
                    disable_time BIGINT
                )
                """,
                // Only the SHA-256 of a session cookie is stored: a reader of the database cannot
                // sign in as anyone.
                """
                CREATE TABLE sessions (
                    token_hash TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id),
                    csrf_token TEXT NOT NULL,
                    create_time BIGINT NOT NULL,
                    last_seen_time BIGINT NOT NULL,
                    address TEXT NOT NULL,
                    user_agent TEXT NOT NULL
                )
                """,
                "CREATE INDEX sessions_user ON sessions (user_id)",
                "ALTER TABLE audit_log ADD COLUMN actor_user_id TEXT",
            ]
        ),
        Migration(
            version: 3,
            description: "console drafts and saved evaluation contexts",
            statements: [
                // One draft per person per environment: the whole template as the person left it
                // and the live version it started from (the base of a three-way merge).
                """
                CREATE TABLE drafts (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id),
                    base_version BIGINT NOT NULL,
                    template TEXT NOT NULL,
                    change_count BIGINT NOT NULL,
                    create_time BIGINT NOT NULL,
                    update_time BIGINT NOT NULL,
                    PRIMARY KEY (project_id, environment_id, user_id)
                )
                """,
                // Named contexts ("German iOS user on 2.1") shared by a project's people.
                """
                CREATE TABLE saved_contexts (
                    project_id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    context TEXT NOT NULL,
                    create_user_id TEXT,
                    create_time BIGINT NOT NULL,
                    PRIMARY KEY (project_id, name)
                )
                """,
            ]
        ),
        Migration(
            version: 4,
            description: "experiments",
            statements: [
                // The definition is the JSON the API reads and answers (ExperimentJSON), kept whole:
                // it never changes after creation, only the status and its times do.
                """
                CREATE TABLE experiments (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    experiment_key TEXT NOT NULL,
                    definition TEXT NOT NULL,
                    status TEXT NOT NULL,
                    create_time BIGINT NOT NULL,
                    creator TEXT NOT NULL,
                    start_time BIGINT,
                    start_version BIGINT,
                    stop_time BIGINT,
                    PRIMARY KEY (project_id, environment_id, experiment_key)
                )
                """
            ]
        ),
        Migration(
            version: 5,
            description: "experiment events",
            statements: [
                // Raw exposures and metric events as apps sent them. The primary key makes a
                // retried batch harmless: an id already stored is not stored again.
                """
                CREATE TABLE experiment_events (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    event_type TEXT NOT NULL,
                    unit_id TEXT NOT NULL,
                    event_time BIGINT NOT NULL,
                    receive_time BIGINT NOT NULL,
                    experiment_key TEXT,
                    variant TEXT,
                    flag_key TEXT,
                    template_version BIGINT,
                    metric_name TEXT,
                    metric_value DOUBLE PRECISION,
                    properties TEXT,
                    PRIMARY KEY (project_id, environment_id, event_id)
                )
                """,
                """
                CREATE INDEX experiment_events_by_unit ON experiment_events (project_id, environment_id, unit_id, event_time)
                """,
            ]
        ),
        Migration(
            version: 6,
            description: "experiment aggregates",
            statements: [
                // Each running experiment's sums (ExperimentTally as JSON), one row per
                // experiment: results read this row, never the events.
                """
                CREATE TABLE experiment_tallies (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    experiment_key TEXT NOT NULL,
                    tally TEXT NOT NULL,
                    update_time BIGINT NOT NULL,
                    PRIMARY KEY (project_id, environment_id, experiment_key)
                )
                """,
                // What each exposed unit contributes (ExperimentUnit), so a new event replaces
                // the unit's old contribution without reading its other events.
                """
                CREATE TABLE experiment_units (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    experiment_key TEXT NOT NULL,
                    unit_id TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    first_exposure BIGINT NOT NULL,
                    several_variants BIGINT NOT NULL,
                    totals TEXT NOT NULL,
                    PRIMARY KEY (project_id, environment_id, experiment_key, unit_id)
                )
                """,
                // Exports read events in time order; retention deletes the oldest.
                """
                CREATE INDEX experiment_events_by_time ON experiment_events (event_time)
                """,
            ]
        ),
        Migration(
            version: 7,
            description: "template versions fetch has served",
            statements: [
                // The results' check "exposures without any fetch of that version" reads it.
                """
                CREATE TABLE served_versions (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    version_number BIGINT NOT NULL,
                    first_served_time BIGINT NOT NULL,
                    PRIMARY KEY (project_id, environment_id, version_number)
                )
                """
            ]
        ),
        Migration(
            version: 8,
            description: "experiment events indexed by receipt; unit index for metric events only",
            statements: [
                // Event times are spread over days (apps send what they queued offline), so the
                // time index took every insert to a random page: on SQLite it cost more than the
                // rest of the insert together. Receipt times only grow, so this index is written
                // at its end; exports read events in the order received and retention deletes by
                // receipt (ExperimentEventStore).
                "DROP INDEX experiment_events_by_time",
                """
                CREATE INDEX experiment_events_by_receipt ON experiment_events (project_id, environment_id, receive_time, event_id)
                """,
                // A unit's events are read back only for its metric events (a late exposure
                // counts them again): exposures need no entry.
                "DROP INDEX experiment_events_by_unit",
                """
                CREATE INDEX experiment_events_by_unit ON experiment_events (project_id, environment_id, unit_id, event_time) \
                WHERE event_type = 'metric'
                """,
            ]
        ),
        Migration(
            version: 9,
            description: "experiment keys compared byte by byte (PostgreSQL)",
            statements: [
                // Every index entry of an event or unit starts with these texts. Under a
                // database's default collation (en_US.UTF-8, even C.UTF-8) each comparison went
                // through strcoll: a third of PostgreSQL's time while ingesting events. Ids and
                // keys are compared for equality and a stable order, never shown sorted, so
                // the byte order of "C" serves; SQLite already compares bytes.
                """
                ALTER TABLE experiment_events ALTER COLUMN project_id TYPE TEXT COLLATE "C", \
                ALTER COLUMN environment_id TYPE TEXT COLLATE "C", ALTER COLUMN event_id TYPE TEXT COLLATE "C", \
                ALTER COLUMN unit_id TYPE TEXT COLLATE "C"
                """,
                """
                ALTER TABLE experiment_units ALTER COLUMN project_id TYPE TEXT COLLATE "C", \
                ALTER COLUMN environment_id TYPE TEXT COLLATE "C", ALTER COLUMN experiment_key TYPE TEXT COLLATE "C", \
                ALTER COLUMN unit_id TYPE TEXT COLLATE "C"
                """,
            ],
            engine: .postgres
        ),
        Migration(
            version: 11,
            description: "experiments' running always-valid readings",
            statements: [
                // AlwaysValidHistory as JSON beside the sums it was computed from, written in the
                // same statement; NULL for tallies written before (their next change starts it).
                "ALTER TABLE experiment_tallies ADD COLUMN always_valid TEXT"
            ]
        ),
        Migration(
            version: 12,
            description: "change policies, change requests and their reviews",
            statements: [
                // One row per environment with a policy; no row means off. `effective_version` is
                // the version that was live when the row was written (the publish transactions
                // after it see the policy).
                """
                CREATE TABLE change_policies (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    policy TEXT NOT NULL,
                    effective_version BIGINT NOT NULL,
                    update_time BIGINT NOT NULL,
                    update_user TEXT NOT NULL,
                    PRIMARY KEY (project_id, environment_id),
                    FOREIGN KEY (project_id, environment_id) REFERENCES environments(project_id, id)
                )
                """,
                // `change` is the proposed change as JSON; `content_hash` its SHA-256 over the
                // canonical encoding with the base version; `revision` counts edits (reviews of
                // an earlier revision no longer count). `apply_time` is for scheduled changes.
                """
                CREATE TABLE change_requests (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    base_version BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    change TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    revision BIGINT NOT NULL,
                    title TEXT NOT NULL,
                    description TEXT NOT NULL,
                    author_id TEXT NOT NULL,
                    author_name TEXT NOT NULL,
                    state TEXT NOT NULL,
                    state_reason TEXT,
                    apply_time BIGINT,
                    applied_version BIGINT,
                    break_glass TEXT,
                    create_time BIGINT NOT NULL,
                    update_time BIGINT NOT NULL,
                    FOREIGN KEY (project_id, environment_id) REFERENCES environments(project_id, id)
                )
                """,
                "CREATE INDEX change_requests_scope ON change_requests (project_id, environment_id, state, create_time)",
                """
                CREATE TABLE change_reviews (
                    request_id TEXT NOT NULL REFERENCES change_requests(id),
                    sequence BIGINT NOT NULL,
                    reviewer_id TEXT NOT NULL,
                    reviewer_name TEXT NOT NULL,
                    decision TEXT NOT NULL,
                    comment TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    revision BIGINT NOT NULL,
                    time BIGINT NOT NULL,
                    PRIMARY KEY (request_id, sequence)
                )
                """,
            ]
        ),
        Migration(
            version: 13,
            description: "webhook endpoints and their outbox",
            statements: [
                // `events`: a JSON array of event types. `enabled` is 0 or 1. `next_sequence`
                // numbers the endpoint's deliveries in the order their changes committed (the
                // outbox write locks the row on PostgreSQL). `previous_secret` stays valid, and
                // signs beside `secret`, until `previous_secret_expiry`.
                """
                CREATE TABLE webhook_endpoints (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id),
                    url TEXT NOT NULL,
                    description TEXT NOT NULL,
                    events TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    previous_secret TEXT,
                    previous_secret_expiry BIGINT,
                    enabled BIGINT NOT NULL,
                    next_sequence BIGINT NOT NULL,
                    create_time BIGINT NOT NULL,
                    update_time BIGINT NOT NULL
                )
                """,
                "CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id)",
                // The outbox: one row per change, written in the change's own transaction. Its id
                // is the `webhook-id` of every delivery of it.
                """
                CREATE TABLE webhook_messages (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    event_type TEXT NOT NULL,
                    version_number BIGINT NOT NULL,
                    payload TEXT NOT NULL,
                    create_time BIGINT NOT NULL
                )
                """,
                // One row per message per endpoint (a redelivery adds another), delivered in
                // `sequence` order per endpoint. A node sends a row only while it holds its lease.
                """
                CREATE TABLE webhook_deliveries (
                    endpoint_id TEXT NOT NULL,
                    sequence BIGINT NOT NULL,
                    message_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempt_count BIGINT NOT NULL,
                    next_attempt_time BIGINT NOT NULL,
                    give_up_time BIGINT NOT NULL,
                    lease_owner TEXT,
                    lease_expiry BIGINT,
                    create_time BIGINT NOT NULL,
                    PRIMARY KEY (endpoint_id, sequence)
                )
                """,
                "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_time)",
                """
                CREATE TABLE webhook_attempts (
                    endpoint_id TEXT NOT NULL,
                    sequence BIGINT NOT NULL,
                    attempt_number BIGINT NOT NULL,
                    attempt_time BIGINT NOT NULL,
                    status_code BIGINT,
                    error TEXT,
                    duration_milliseconds BIGINT NOT NULL,
                    PRIMARY KEY (endpoint_id, sequence, attempt_number)
                )
                """,
            ]
        ),
        Migration(
            version: 14,
            description: "single sign-on: accounts' identity at the provider, sign-ins under way",
            statements: [
                // Issuer + subject name a person at an OpenID Connect provider; NULL for accounts
                // that never signed in through one (a unique index allows many NULL pairs).
                "ALTER TABLE users ADD COLUMN oidc_issuer TEXT",
                "ALTER TABLE users ADD COLUMN oidc_subject TEXT",
                "CREATE UNIQUE INDEX users_oidc_identity ON users (oidc_issuer, oidc_subject)",
                // One row per sign-in sent to the provider and not yet back: the SHA-256 of its
                // `state`, the nonce and PKCE verifier it must come back with, where to go after.
                // Deleted when the browser returns, so a state works once.
                """
                CREATE TABLE oidc_sign_ins (
                    state_hash TEXT PRIMARY KEY,
                    nonce TEXT NOT NULL,
                    code_verifier TEXT NOT NULL,
                    next_path TEXT NOT NULL,
                    create_time BIGINT NOT NULL
                )
                """,
            ]
        ),
        Migration(
            version: 15,
            description: "the scheduler's index of scheduled change requests",
            statements: [
                // Every node reads the earliest scheduled requests each second.
                "CREATE INDEX change_requests_due ON change_requests (state, apply_time)"
            ]
        ),
        Migration(
            version: 16,
            description: "progressive rollouts and their decisions",
            statements: [
                // The plan is the JSON the API reads (RolloutJSON), kept whole: it never changes
                // after creation. State and step change only by a compare-and-set on both, in the
                // transaction of the publish or hold that goes with it.
                """
                CREATE TABLE rollouts (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    rollout_id TEXT NOT NULL,
                    plan TEXT NOT NULL,
                    state TEXT NOT NULL,
                    step BIGINT NOT NULL,
                    step_start_time BIGINT,
                    create_time BIGINT NOT NULL,
                    creator TEXT NOT NULL,
                    update_time BIGINT NOT NULL,
                    PRIMARY KEY (project_id, environment_id, rollout_id)
                )
                """,
                "CREATE INDEX rollouts_by_state ON rollouts (state)",
                // Every decision, numbered per rollout: what was decided at which step, why, and
                // the figures per guardrail (JSON).
                """
                CREATE TABLE rollout_decisions (
                    project_id TEXT NOT NULL,
                    environment_id TEXT NOT NULL,
                    rollout_id TEXT NOT NULL,
                    sequence BIGINT NOT NULL,
                    decision_time BIGINT NOT NULL,
                    step BIGINT NOT NULL,
                    percent DOUBLE PRECISION NOT NULL,
                    action TEXT NOT NULL,
                    actor TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    figures TEXT,
                    PRIMARY KEY (project_id, environment_id, rollout_id, sequence)
                )
                """,
            ]
        ),
        Migration(
            version: 17,
            description: "the flag keys each audit entry changed; an environment's colour",
            statements: [
                // One row per flag key an entry changed, so the log filters by flag on the server.
                """
                CREATE TABLE audit_log_flags (
                    flag_key TEXT NOT NULL,
                    audit_id TEXT NOT NULL,
                    PRIMARY KEY (flag_key, audit_id)
                )
                """,
                // A palette colour's name (`red`, `yellow`…), set by admins; NULL shows the neutral bar.
                "ALTER TABLE environments ADD COLUMN colour TEXT",
            ]
        ),
        Migration(
            version: 18,
            description: "experiment events and units keyed by a number per environment (SQLite)",
            statements: eventEnvironmentNumbers(.sqlite),
            engine: .sqlite
        ),
        Migration(
            version: 19,
            description: "experiment events and units keyed by a number per environment (PostgreSQL)",
            statements: eventEnvironmentNumbers(.postgres),
            engine: .postgres
        ),
    ]

    /// Migrations 18 and 19: every row and index entry of the event tables started with the
    /// project's and the environment's ids, two texts compared in every step of every index
    /// search (about a sixth of SQLite's time storing events). An environment now has a number of
    /// its own in `event_environments`, given when it first stores an event and never changed or
    /// reused (``EventEnvironment``), and the two tables are rebuilt around it. The engines
    /// differ only in how a number is given and in PostgreSQL's byte-order collation
    /// (migration 9).
    private static func eventEnvironmentNumbers(_ kind: DatabaseEngine.Kind) -> [String] {
        let (number, text, order) =
            switch kind {
            case .sqlite: ("INTEGER PRIMARY KEY", "TEXT", "e.rowid")
            case .postgres:
                (
                    "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "TEXT COLLATE \"C\"",
                    "e.receive_time, e.event_id"
                )
            }
        let events = """
            event_id, event_type, unit_id, event_time, receive_time, experiment_key, variant, flag_key, \
            template_version, metric_name, metric_value, properties
            """
        let units = "experiment_key, unit_id, variant, first_exposure, several_variants, totals"
        let renamed: [String] =
            kind == .postgres
            ? [
                "ALTER TABLE experiment_events RENAME CONSTRAINT experiment_events_numbered_pkey TO experiment_events_pkey",
                "ALTER TABLE experiment_units RENAME CONSTRAINT experiment_units_numbered_pkey TO experiment_units_pkey",
            ] : []
        return [
            """
            CREATE TABLE event_environments (
                number \(number),
                project_id \(text) NOT NULL,
                environment_id \(text) NOT NULL,
                UNIQUE (project_id, environment_id)
            )
            """,
            """
            INSERT INTO event_environments (project_id, environment_id) \
            SELECT project_id, environment_id FROM experiment_events \
            UNION SELECT project_id, environment_id FROM experiment_units ORDER BY 1, 2
            """,
            """
            CREATE TABLE experiment_events_numbered (
                environment_number BIGINT NOT NULL,
                event_id \(text) NOT NULL,
                event_type TEXT NOT NULL,
                unit_id \(text) NOT NULL,
                event_time BIGINT NOT NULL,
                receive_time BIGINT NOT NULL,
                experiment_key TEXT,
                variant TEXT,
                flag_key TEXT,
                template_version BIGINT,
                metric_name TEXT,
                metric_value DOUBLE PRECISION,
                properties TEXT,
                PRIMARY KEY (environment_number, event_id)
            )
            """,
            // In the order received, so SQLite's rowids keep that order.
            """
            INSERT INTO experiment_events_numbered (environment_number, \(events)) \
            SELECT n.number, \(events.split(separator: ", ").map { "e.\($0)" }.joined(separator: ", ")) \
            FROM experiment_events e JOIN event_environments n \
            ON n.project_id = e.project_id AND n.environment_id = e.environment_id ORDER BY \(order)
            """,
            "DROP TABLE experiment_events",
            "ALTER TABLE experiment_events_numbered RENAME TO experiment_events",
            "CREATE INDEX experiment_events_by_receipt ON experiment_events (environment_number, receive_time, event_id)",
            """
            CREATE INDEX experiment_events_by_unit ON experiment_events (environment_number, unit_id, event_time) \
            WHERE event_type = 'metric'
            """,
            """
            CREATE TABLE experiment_units_numbered (
                environment_number BIGINT NOT NULL,
                experiment_key \(text) NOT NULL,
                unit_id \(text) NOT NULL,
                variant TEXT NOT NULL,
                first_exposure BIGINT NOT NULL,
                several_variants BIGINT NOT NULL,
                totals TEXT NOT NULL,
                PRIMARY KEY (environment_number, experiment_key, unit_id)
            )
            """,
            """
            INSERT INTO experiment_units_numbered (environment_number, \(units)) \
            SELECT n.number, \(units.split(separator: ", ").map { "u.\($0)" }.joined(separator: ", ")) \
            FROM experiment_units u JOIN event_environments n \
            ON n.project_id = u.project_id AND n.environment_id = u.environment_id
            """,
            "DROP TABLE experiment_units",
            "ALTER TABLE experiment_units_numbered RENAME TO experiment_units",
        ] + renamed
    }

    package static var latestVersion: Int { all.last?.version ?? 0 }

    /// Brings the schema up to date, every pending step in one transaction. Safe to run from
    /// several nodes at once: on PostgreSQL the transaction holds an advisory lock (on SQLite
    /// `BEGIN IMMEDIATE` is the lock), so nodes take turns, and a step another node recorded
    /// while this one waited is skipped. (Without the lock two
    /// nodes creating the same tables can fail with errors other than a unique violation.)
    package static func run(on engine: DatabaseEngine) async throws {
        let kind = engine.kind
        do {
            try await engine.transaction { database in
                try await lock(database, kind: kind)
                try await database.raw(
                    "CREATE TABLE IF NOT EXISTS vane_schema_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, applied_time BIGINT NOT NULL)"
                ).run()
            }
        } catch  where StoreErrors.isUniqueViolation(error) {
            // PostgreSQL: two nodes creating the table at once; the loser sees the winner's type
            // row (pg_type) and fails even with IF NOT EXISTS. The table is there either way.
        }
        let applied = try await appliedVersions(engine)
        if let newest = applied.max(), newest > latestVersion {
            throw StorageError.schemaTooNew(found: newest, supported: latestVersion)
        }
        let pending = all.filter { !applied.contains($0.version) }
        guard !pending.isEmpty else { return }
        // Every pending step in one transaction: a fresh database commits (and SQLite syncs)
        // once, not once per step, so a second node opening the same file waits out one short
        // transaction instead of taking turns with this one for each step (under load it ran
        // out of its busy timeouts); and a step that fails leaves none of them applied.
        try await engine.transaction { database in
            try await lock(database, kind: kind)
            // Another node may have applied some while this one waited for the lock.
            let recorded = Set(
                try await database.raw("SELECT version FROM vane_schema_migrations").all(
                    decodingColumn: "version",
                    as: Int.self
                )
            )
            for migration in pending where !recorded.contains(migration.version) {
                if migration.engine == nil || migration.engine == kind {
                    for statement in migration.statements { try await database.raw(SQLQueryString(statement)).run() }
                }
                try await database.raw(
                    """
                    INSERT INTO vane_schema_migrations (version, description, applied_time) \
                    VALUES (\(bind: migration.version), \(bind: migration.description), \(bind: Clock.nowMilliseconds()))
                    """
                ).run()
            }
        }
    }

    /// PostgreSQL: waits for the migration lock, held until the transaction ends. SQLite's
    /// `BEGIN IMMEDIATE` already gives one writer at a time.
    private static func lock(_ database: any SQLDatabase, kind: DatabaseEngine.Kind) async throws {
        guard kind == .postgres else { return }
        try await database.raw("SELECT pg_advisory_xact_lock(\(bind: advisoryLockKey))").run()
    }

    /// The advisory lock's key: "vane" in ASCII, so it does not collide with another
    /// application's locks on a shared database by accident.
    package static let advisoryLockKey: Int64 = 0x7661_6e65

    package static func appliedVersions(_ engine: DatabaseEngine) async throws -> Set<Int> {
        try await engine.withSession { database in
            Set(
                try await database.raw("SELECT version FROM vane_schema_migrations").all(
                    decodingColumn: "version",
                    as: Int.self
                )
            )
        }
    }
}
