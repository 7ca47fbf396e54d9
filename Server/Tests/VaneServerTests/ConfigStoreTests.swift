import Crypto
import Foundation
import Logging
import SQLKit
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The store, against both engines: every test runs on SQLite and on PostgreSQL.
@Suite(.timeLimit(.minutes(5))) struct ConfigStoreTests {
    static let admin = Actor(keyId: "k_test", name: "alice")

    // MARK: Helpers

    /// Opens a store on a fresh database, runs `body`, and closes the database.
    static func withStore<R: Sendable>(
        _ database: TestDatabase,
        retainedVersions: Int? = nil,
        _ body: (ConfigStore, DatabaseLocation) async throws -> R
    ) async throws -> R {
        let location = try await database.freshLocation()
        let store = try await openStore(location, retainedVersions: retainedVersions)
        do {
            let result = try await body(store, location)
            try await store.engine.shutdown()
            return result
        } catch {
            try? await store.engine.shutdown()
            throw error
        }
    }

    static func openStore(_ location: DatabaseLocation, retainedVersions: Int? = nil) async throws -> ConfigStore {
        var logger = Logger(label: "vane-store-test")
        logger.logLevel = .warning
        let engine = try await DatabaseEngine.open(location, logger: logger)
        do {
            return try await ConfigStore(engine: engine, retainedVersions: retainedVersions)
        } catch {
            try? await engine.shutdown()
            throw error
        }
    }

    /// Creates project `app` with environment `prod`.
    static func makeEnvironment(_ store: ConfigStore) async throws {
        try await store.createProject(id: "app", name: "App", actor: admin)
        try await store.createEnvironment(projectId: "app", id: "prod", name: "Production", actor: admin)
    }

    /// A template with one parameter whose default value is `value`.
    static func template(_ value: String, description: String? = nil) -> ConfigTemplate {
        ConfigTemplate(
            parameters: [TemplateParameter(key: "banner", defaultValue: .value(value))],
            version: description.map { TemplateVersion(description: $0) }
        )
    }

    static func publish(
        _ store: ConfigStore,
        _ value: String,
        expected: Int64?,
        description: String? = nil
    ) async throws -> StoredVersion {
        try await store.publish(
            projectId: "app",
            environmentId: "prod",
            template: template(value, description: description),
            expectedVersion: expected,
            actor: admin
        )
    }

    static func bannerValue(_ store: ConfigStore, _ number: Int64) async throws -> String? {
        try await store.version(projectId: "app", environmentId: "prod", number: number)?.template.parameters.first?
            .defaultValue?.stringValue
    }

    static func allVersionNumbers(_ store: ConfigStore) async throws -> [Int64] {
        var query = VersionQuery()
        query.pageSize = 300
        return try await store.versions(projectId: "app", environmentId: "prod", query: query).items.compactMap {
            $0.number
        }
    }

    static func count(_ store: ConfigStore, _ sql: String) async throws -> Int {
        try await store.engine.withSession { database in
            try await database.raw(SQLQueryString(sql)).first(decodingColumn: "n", as: Int.self) ?? -1
        }
    }

    // MARK: Migrations

    @Test(arguments: TestDatabase.allCases)
    func migrationsAreIdempotent(database: TestDatabase) async throws {
        let location = try await database.freshLocation()
        let first = try await Self.openStore(location)
        try await Self.makeEnvironment(first)
        _ = try await Self.publish(first, "kept", expected: 0)
        try await first.engine.shutdown()

        // Opening again runs the migrations again: nothing changes, nothing is lost.
        let second = try await Self.openStore(location)
        #expect(try await Migrations.appliedVersions(second.engine) == Set(Migrations.all.map(\.version)))
        #expect(try await Self.bannerValue(second, 1) == "kept")
        #expect(try await second.projects().map(\.id) == ["app"])
        try await second.engine.shutdown()
    }

    @Test(arguments: TestDatabase.allCases)
    func twoStoresMigrateOneFreshDatabaseConcurrently(database: TestDatabase) async throws {
        let location = try await database.freshLocation()
        // Every store that opened is shut down whatever fails: SQLiteNIO asserts (and ends the whole
        // test process) when a connection is dropped open, which would hide the failure itself.
        let opened = await withTaskGroup(of: Result<ConfigStore, any Error>.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    do { return .success(try await Self.openStore(location)) } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        var stores: [ConfigStore] = []
        for result in opened {
            switch result {
            case .success(let store): stores.append(store)
            case .failure(let error):
                Issue.record("a store did not open while another migrated: \(String(reflecting: error))")
            }
        }
        if stores.count == 2 {
            for store in stores {
                let applied = try? await Migrations.appliedVersions(store.engine)
                #expect(applied == Set(Migrations.all.map(\.version)))
            }
            let created: Void? = try? await Self.makeEnvironment(stores[0])
            #expect(created != nil)
            #expect((try? await stores[1].projects().map(\.id)) == ["app"])
        }
        for store in stores { try await store.engine.shutdown() }
    }

    // MARK: Projects and environments

    @Test(arguments: TestDatabase.allCases)
    func projectsAndEnvironmentsAreCreatedListedAndUnique(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await store.createProject(id: "zeta", name: "Zeta", actor: Self.admin)
            try await store.createProject(id: "alpha", name: "Alpha", actor: Self.admin)
            #expect(try await store.projects().map(\.id) == ["alpha", "zeta"])
            #expect(try await store.project(id: "alpha")?.name == "Alpha")
            #expect(try await store.project(id: "missing") == nil)

            await #expect(throws: StorageError.projectExists("alpha")) {
                try await store.createProject(id: "alpha", name: "Again", actor: Self.admin)
            }
            #expect(try await store.project(id: "alpha")?.name == "Alpha")

            try await store.createEnvironment(projectId: "alpha", id: "staging", name: "Staging", actor: Self.admin)
            try await store.createEnvironment(projectId: "alpha", id: "prod", name: "Prod", actor: Self.admin)
            let environments = try await store.environments(projectId: "alpha")
            #expect(environments.map(\.id) == ["prod", "staging"])
            #expect(environments.allSatisfy { $0.templateVersion == 0 })
            #expect(try await store.environments(projectId: "zeta").isEmpty)

            await #expect(throws: StorageError.environmentExists(project: "alpha", environment: "prod")) {
                try await store.createEnvironment(projectId: "alpha", id: "prod", name: "Again", actor: Self.admin)
            }
            await #expect(throws: StorageError.projectNotFound("missing")) {
                try await store.createEnvironment(projectId: "missing", id: "prod", name: "Prod", actor: Self.admin)
            }
            // The same environment id in another project is fine.
            try await store.createEnvironment(projectId: "zeta", id: "prod", name: "Prod", actor: Self.admin)
            #expect(try await store.environments(projectId: "zeta").map(\.id) == ["prod"])
        }
    }

    // MARK: Publishing

    @Test(arguments: TestDatabase.allCases)
    func publishesNumberVersionsAndRecordWhoWhyAndHow(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            #expect(try await store.latestVersion(projectId: "app", environmentId: "prod") == nil)

            let first = try await Self.publish(store, "one", expected: 0, description: "first")
            let second = try await Self.publish(store, "two", expected: nil, description: "forced")
            let third = try await store.publish(
                projectId: "app",
                environmentId: "prod",
                template: first.template,
                expectedVersion: 2,
                actor: Actor(keyId: "k_other", name: "bob"),
                rollbackSource: 1
            )
            #expect([first.number, second.number, third.number] == [1, 2, 3])
            #expect(first.template.version?.updateType == .incrementalUpdate)
            #expect(second.template.version?.updateType == .forcedUpdate)
            #expect(third.template.version?.updateType == .rollback)
            #expect(third.template.version?.rollbackSource == "1")
            #expect(third.template.version?.updateUser?.name == "bob")
            #expect(try await store.environment(projectId: "app", id: "prod")?.templateVersion == 3)
            #expect(try await store.environment(projectId: "app", id: "nope") == nil)
            #expect(try await store.currentVersionNumber(projectId: "app", environmentId: "prod") == 3)
            #expect(try await store.currentVersionNumber(projectId: "app", environmentId: "nope") == 0)
            // What a publish returns is the text it stored, which is what a read returns.
            #expect(third.templateJSON == third.template.serialized(.compact))
            #expect(
                try await store.version(projectId: "app", environmentId: "prod", number: 3)?.templateJSON
                    == third.templateJSON
            )

            let stored = try await store.version(projectId: "app", environmentId: "prod", number: 1)
            #expect(stored?.template.version?.versionNumber == "1")
            #expect(stored?.template.version?.description == "first")
            #expect(stored?.template.version?.updateUser?.name == "alice")
            #expect(stored?.template.parameters == first.template.parameters)
            #expect(try await store.latestVersion(projectId: "app", environmentId: "prod")?.number == 3)
            #expect(try await Self.bannerValue(store, 3) == "one")

            let listed = try await store.versions(projectId: "app", environmentId: "prod", query: VersionQuery()).items
            #expect(listed.map(\.versionNumber) == ["3", "2", "1"])
            #expect(listed.map(\.updateType) == [.rollback, .forcedUpdate, .incrementalUpdate])
            #expect(listed.map { $0.updateUser?.name } == ["bob", "alice", "alice"])
            // A rollback republishes the old template, description included.
            #expect(listed.map(\.description) == ["first", "forced", "first"])
            #expect(listed.map(\.rollbackSource) == ["1", nil, nil])
            #expect(listed.allSatisfy { $0.updateTime != nil })

            let numbers = try await store.currentVersionNumbers()
            #expect(numbers == [EnvironmentKey(projectId: "app", environmentId: "prod"): 3])
            #expect(try await store.allLatestVersions().map(\.number) == [3])
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func aStaleExpectedVersionIsAConflictAndWritesNothing(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            _ = try await Self.publish(store, "one", expected: 0)
            _ = try await Self.publish(store, "two", expected: 1)
            await #expect(throws: StorageError.versionConflict(expected: 1, current: 2)) {
                try await Self.publish(store, "stale", expected: 1)
            }
            await #expect(throws: StorageError.versionConflict(expected: 5, current: 2)) {
                try await Self.publish(store, "future", expected: 5)
            }
            #expect(try await Self.allVersionNumbers(store) == [2, 1])
            #expect(try await Self.bannerValue(store, 2) == "two")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func concurrentPublishersWithTheSameExpectedVersionHaveExactlyOneWinner(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            _ = try await Self.publish(store, "base", expected: 0)
            let outcomes = try await Self.racePublishes(stores: [store], count: 20, expected: 1)
            let winners = outcomes.compactMap(\.number)
            #expect(winners == [2])
            #expect(outcomes.filter(\.isConflict).count == 19)
            #expect(try await Self.allVersionNumbers(store) == [2, 1])
            let winner = outcomes.first { $0.number != nil }
            #expect(try await Self.bannerValue(store, 2) == winner?.value)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func concurrentForcedPublishesAreAllStoredWithConsecutiveNumbers(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            let outcomes = try await Self.racePublishes(stores: [store], count: 20, expected: nil)
            try await Self.expectEveryPublishStored(outcomes, store: store, count: 20)
        }
    }

    /// Two server nodes, each with its own pool, publishing to one PostgreSQL database.
    @Test(.needsPostgreSQL) func twoNodesRacingOnOnePostgreSQLDatabaseLoseNothing() async throws {
        try await Self.withStore(.postgres) { first, location in
            try await Self.makeEnvironment(first)
            let second = try await Self.openStore(location)
            do {
                let forced = try await Self.racePublishes(stores: [first, second], count: 30, expected: nil)
                try await Self.expectEveryPublishStored(forced, store: second, count: 30)

                let checked = try await Self.racePublishes(stores: [first, second], count: 20, expected: 30)
                #expect(checked.compactMap(\.number) == [31])
                #expect(checked.filter(\.isConflict).count == 19)
                #expect(try await Self.allVersionNumbers(first) == Array((1...31).reversed()))
                try await second.engine.shutdown()
            } catch {
                try? await second.engine.shutdown()
                throw error
            }
        }
    }

    struct Outcome: Sendable {
        var value: String
        var number: Int64?
        var isConflict: Bool
    }

    /// Runs `count` publishes at once, spread over `stores`, each publishing a distinct value.
    static func racePublishes(stores: [ConfigStore], count: Int, expected: Int64?) async throws -> [Outcome] {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            for index in 0..<count {
                let store = stores[index % stores.count]
                group.addTask {
                    let value = "value-\(index)"
                    do {
                        let stored = try await publish(store, value, expected: expected)
                        return Outcome(value: value, number: stored.number, isConflict: false)
                    } catch StorageError.versionConflict {
                        return Outcome(value: value, number: nil, isConflict: true)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Every publish succeeded, with numbers 1…count, and each number holds what its publisher sent.
    static func expectEveryPublishStored(_ outcomes: [Outcome], store: ConfigStore, count: Int) async throws {
        #expect(outcomes.allSatisfy { !$0.isConflict })
        #expect(outcomes.compactMap(\.number).sorted() == Array(1...Int64(count)))
        #expect(try await allVersionNumbers(store) == Array((1...Int64(count)).reversed()))
        for outcome in outcomes {
            guard let number = outcome.number else { continue }
            #expect(try await bannerValue(store, number) == outcome.value)
        }
        let audited = try await Self.count(
            store,
            "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'template.publish'"
        )
        #expect(audited == count)
    }

    @Test(arguments: TestDatabase.allCases)
    func aPublishToAMissingEnvironmentWritesNothing(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            let auditBefore = try await Self.count(store, "SELECT COUNT(*) AS n FROM audit_log")
            await #expect(throws: StorageError.environmentNotFound(project: "app", environment: "nope")) {
                try await store.publish(
                    projectId: "app",
                    environmentId: "nope",
                    template: Self.template("x"),
                    expectedVersion: nil,
                    actor: Self.admin
                )
            }
            #expect(try await Self.count(store, "SELECT COUNT(*) AS n FROM template_versions") == 0)
            #expect(try await Self.count(store, "SELECT COUNT(*) AS n FROM audit_log") == auditBefore)
        }
    }

    /// The audit entry is written after the version row: when it fails, the version row must go too.
    @Test(arguments: TestDatabase.allCases)
    func aPublishWhoseAuditEntryFailsIsRolledBackWhole(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            _ = try await Self.publish(store, "one", expected: 1 - 1)
            let auditBefore = try await Self.count(store, "SELECT COUNT(*) AS n FROM audit_log")
            let statements: [SQLQueryString] =
                switch database {
                case .sqlite:
                    [
                        """
                        CREATE TRIGGER injected_failure BEFORE INSERT ON audit_log \
                        BEGIN SELECT RAISE(ABORT, 'injected failure'); END
                        """
                    ]
                case .postgres:
                    [
                        """
                        CREATE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS \
                        $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$
                        """,
                        """
                        CREATE TRIGGER injected_failure BEFORE INSERT ON audit_log \
                        FOR EACH ROW EXECUTE FUNCTION injected_failure()
                        """,
                    ]
                }
            try await store.engine.withSession { database in
                for statement in statements { try await database.raw(statement).run() }
            }
            await #expect(throws: (any Error).self) { try await Self.publish(store, "two", expected: 1) }
            await #expect(throws: (any Error).self) { try await Self.publish(store, "two", expected: nil) }
            #expect(try await Self.allVersionNumbers(store) == [1])
            #expect(try await store.latestVersion(projectId: "app", environmentId: "prod")?.number == 1)
            #expect(try await Self.count(store, "SELECT COUNT(*) AS n FROM audit_log") == auditBefore)

            // The store still works once the fault is gone.
            try await store.engine.withSession { database in
                try await database.raw(
                    "DROP TRIGGER injected_failure\(unsafeRaw: database.dialect.name == "sqlite" ? "" : " ON audit_log")"
                )
                .run()
            }
            #expect(try await Self.publish(store, "two", expected: 1).number == 2)
        }
    }

    // MARK: Version history

    @Test(arguments: TestDatabase.allCases)
    func versionsPageNewestFirstAndFilterByTimeAndNumber(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            var times: [Int64] = []
            for index in 1...7 {
                times.append(try await Self.publish(store, "v\(index)", expected: nil).updateTime)
            }
            func list(_ configure: (inout VersionQuery) -> Void) async throws -> Page<TemplateVersion> {
                var query = VersionQuery()
                configure(&query)
                return try await store.versions(projectId: "app", environmentId: "prod", query: query)
            }
            var pages: [[String?]] = []
            var token: String?
            repeat {
                let page = try await list {
                    $0.pageSize = 3
                    $0.pageToken = token
                }
                pages.append(page.items.map(\.versionNumber))
                token = page.nextPageToken
            } while token != nil
            #expect(pages == [["7", "6", "5"], ["4", "3", "2"], ["1"]])

            #expect(try await list { $0.endVersionNumber = 4 }.items.map(\.versionNumber) == ["4", "3", "2", "1"])
            let limited = try await list {
                $0.endVersionNumber = 5
                $0.pageSize = 2
            }
            #expect(limited.items.map(\.versionNumber) == ["5", "4"])
            let next = try await list {
                $0.endVersionNumber = 5
                $0.pageSize = 2
                $0.pageToken = limited.nextPageToken
            }
            #expect(next.items.map(\.versionNumber) == ["3", "2"])

            // Start is inclusive, end exclusive; versions published in one millisecond share a time.
            let start = times[2]
            let end = times[5]
            let expected = (1...7).filter { times[$0 - 1] >= start && times[$0 - 1] < end }.reversed().map(String.init)
            let windowed = try await list {
                $0.startTime = start
                $0.endTime = end
            }
            #expect(windowed.items.map(\.versionNumber) == expected)
            #expect(windowed.items.map(\.versionNumber).contains("3"))
            #expect(!windowed.items.map(\.versionNumber).contains("6"))
            #expect(try await list { $0.startTime = times[6] + 1 }.items.isEmpty)
            #expect(try await list { $0.endTime = times[0] }.items.isEmpty)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func retentionKeepsTheNewestVersions(database: TestDatabase) async throws {
        try await Self.withStore(database, retainedVersions: 3) { store, _ in
            try await Self.makeEnvironment(store)
            for index in 1...5 { _ = try await Self.publish(store, "v\(index)", expected: Int64(index - 1)) }
            #expect(try await Self.allVersionNumbers(store) == [5, 4, 3])
            #expect(try await store.version(projectId: "app", environmentId: "prod", number: 2) == nil)
            #expect(try await Self.bannerValue(store, 3) == "v3")
            // Numbers keep counting after pruning.
            #expect(try await Self.publish(store, "v6", expected: 5).number == 6)
            #expect(try await Self.allVersionNumbers(store) == [6, 5, 4])
            // Every publish is still in the audit log.
            let audited = try await store.audit(projectId: "app", environmentId: "prod", pageSize: 100, pageToken: nil)
            #expect(audited.items.filter { $0.action == "template.publish" }.count == 6)
        }
    }

    // MARK: API keys

    @Test(arguments: TestDatabase.allCases)
    func keysAreCreatedListedRevokedAndStoredOnlyAsHashes(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            let keys = KeyIndex(store: store)
            let (admin, adminSecret) = try await keys.createKey(
                name: "ops",
                role: .admin,
                projectId: nil,
                environmentId: nil,
                actor: Self.admin
            )
            let (client, clientSecret) = try await keys.createKey(
                name: "ios",
                role: .client,
                projectId: "app",
                environmentId: "prod",
                actor: Self.admin
            )
            #expect(adminSecret.hasPrefix("vane_admin_"))
            #expect(clientSecret.hasPrefix("vane_client_"))
            #expect(adminSecret != clientSecret)

            let listed = try await store.keys()
            #expect(Set(listed.map(\.id)) == [admin.id, client.id])
            #expect(listed.first { $0.id == client.id } == client)

            // The database holds the lower-case hex SHA-256 of each key, never the key.
            let rows = try await store.engine.withSession { database in
                try await database.raw("SELECT id, key_hash FROM api_keys").all()
            }
            var stored: [String: String] = [:]
            for row in rows {
                stored[try row.decode(column: "id", as: String.self)] = try row.decode(
                    column: "key_hash",
                    as: String.self
                )
            }
            for (key, secret) in [(admin, adminSecret), (client, clientSecret)] {
                let digest = SHA256.hash(data: Array(secret.utf8)).map { String(format: "%02x", $0) }.joined()
                #expect(stored[key.id] == digest)
                #expect(stored[key.id]?.contains(secret) == false)
            }
            let everything = try await Self.dumpAllText(store)
            #expect(!everything.contains(adminSecret))
            #expect(!everything.contains(clientSecret))

            let hashes = try await store.keyHashes()
            #expect(Set(hashes.map(\.hash)) == Set(stored.values))

            try await store.revokeKey(id: client.id, actor: Self.admin)
            let revoked = try await store.keys().first { $0.id == client.id }
            #expect(revoked?.revokeTime != nil)
            // Revoking twice is harmless and records one entry.
            try await store.revokeKey(id: client.id, actor: Self.admin)
            let revocations = try await store.audit(projectId: nil, environmentId: nil, pageSize: 100, pageToken: nil)
                .items.filter { $0.action == "key.revoke" }
            #expect(revocations.count == 1)
            await #expect(throws: StorageError.keyNotFound("k_missing")) {
                try await store.revokeKey(id: "k_missing", actor: Self.admin)
            }
        }
    }

    /// Every text column of every table, to check that no secret is stored anywhere.
    static func dumpAllText(_ store: ConfigStore) async throws -> String {
        let queries = [
            "SELECT id || name || role || key_hash AS t FROM api_keys",
            "SELECT summary || details || actor_name AS t FROM audit_log",
        ]
        var text = ""
        for query in queries {
            let values = try await store.engine.withSession { database in
                try await database.raw(SQLQueryString(query)).all(decodingColumn: "t", as: String.self)
            }
            text += values.joined(separator: "\n")
        }
        return text
    }

    // MARK: Audit log

    @Test(arguments: TestDatabase.allCases)
    func auditPagingNeitherSkipsNorRepeatsEntriesWithTheSameSequence(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            // Two nodes writing in the same millisecond can produce the same sequence number.
            let ids = (0..<5).map { "00000000-0000-0000-0000-00000000000\($0)" }
            try await store.engine.withSession { database in
                for id in ids {
                    try await database.raw(
                        """
                        INSERT INTO audit_log (id, time, sequence, actor_key_id, actor_name, action, project_id, \
                        environment_id, summary, details) VALUES (\(bind: id), 1000, 1000000, NULL, 'node', \
                        'project.create', NULL, NULL, 'tie', '{}')
                        """
                    ).run()
                }
            }
            var seen: [String] = []
            var token: String?
            repeat {
                let page = try await store.audit(projectId: nil, environmentId: nil, pageSize: 2, pageToken: token)
                seen += page.items.map(\.id)
                token = page.nextPageToken
            } while token != nil
            #expect(seen == ids.reversed())
            await #expect(throws: StorageError.invalidPageToken("next")) {
                try await store.audit(projectId: nil, environmentId: nil, pageSize: 2, pageToken: "next")
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func auditLogIsNewestFirstPagedAndFiltered(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            try await store.createEnvironment(projectId: "app", id: "dev", name: "Dev", actor: Self.admin)
            try await store.createProject(id: "other", name: "Other", actor: Actor(keyId: nil, name: "bob"))
            for index in 1...4 { _ = try await Self.publish(store, "v\(index)", expected: nil) }

            var all: [AuditEntry] = []
            var token: String?
            repeat {
                let page = try await store.audit(projectId: nil, environmentId: nil, pageSize: 2, pageToken: token)
                #expect(page.items.count <= 2)
                all += page.items
                token = page.nextPageToken
            } while token != nil
            #expect(
                all.map(\.action) == [
                    "template.publish", "template.publish", "template.publish", "template.publish", "project.create",
                    "environment.create", "environment.create", "project.create",
                ]
            )
            #expect(Set(all.map(\.id)).count == all.count)
            #expect(all.first?.summary == "published version 4 (FORCED_UPDATE)")
            #expect(all.first?.actor == Self.admin)
            #expect(all.first?.details.objectValue?["versionNumber"] == "4")
            #expect(all[4].actor.name == "bob")
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.time >= $1.time })

            let environment = try await store.audit(
                projectId: "app",
                environmentId: "prod",
                pageSize: 100,
                pageToken: nil
            )
            #expect(
                environment.items.map(\.action) == Array(repeating: "template.publish", count: 4) + [
                    "environment.create"
                ]
            )
            #expect(environment.nextPageToken == nil)
            let project = try await store.audit(projectId: "app", environmentId: nil, pageSize: 100, pageToken: nil)
            #expect(project.items.count == 7)
            let other = try await store.audit(projectId: "other", environmentId: nil, pageSize: 100, pageToken: nil)
            #expect(other.items.map(\.action) == ["project.create"])
        }
    }

    // MARK: Content fidelity

    @Test(arguments: TestDatabase.allCases)
    func aLargeTemplateRoundTripsByteEquivalently(database: TestDatabase) async throws {
        try await Self.withStore(database) { store, _ in
            try await Self.makeEnvironment(store)
            let conditions = (0..<20).map {
                TemplateCondition(name: "c\($0)", expression: "device.country in ['c\($0)', 'x\($0)']")
            }
            let parameters = (0..<3_000).map { index in
                TemplateParameter(
                    key: "parameter_\(index)",
                    defaultValue: .value(String(repeating: "v\(index) ", count: 1 + index % 7)),
                    conditionalValues: index % 3 == 0
                        ? [ConditionalValue(conditionName: "c\(index % 20)", value: .value("on"))] : [],
                    description: index % 5 == 0 ? "Parameter number \(index)" : nil,
                    valueType: index % 2 == 0 ? .string : .number
                )
            }
            let template = ConfigTemplate(conditions: conditions, parameters: parameters)
            let published = try await store.publish(
                projectId: "app",
                environmentId: "prod",
                template: template,
                expectedVersion: 0,
                actor: Self.admin
            )
            let read = try #require(try await store.version(projectId: "app", environmentId: "prod", number: 1))
            #expect(read.template == published.template)
            #expect(read.template.serialized(.compact) == published.template.serialized(.compact))
            #expect(read.template.parameters.count == 3_000)
            let latest = try await store.latestVersion(projectId: "app", environmentId: "prod")
            #expect(latest?.template.serialized(.compact) == published.template.serialized(.compact))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func awkwardStringsSurviveStorage(database: TestDatabase) async throws {
        let awkward = [
            #"she said "hi" and 'bye' \ backslash"#,
            "Grüße, 日本語, Ελληνικά, עברית",
            "emoji 🎉👩‍👩‍👧‍👦🏳️‍🌈",
            "controls \u{01}\u{07}\u{08}\t\n\r\u{1B}\u{1F}\u{7F}",
            "'; DROP TABLE template_versions; --",
            "trailing spaces   ",
            "",
        ]
        try await Self.withStore(database) { store, _ in
            try await store.createProject(id: "app", name: awkward[1], actor: Actor(keyId: nil, name: awkward[2]))
            try await store.createEnvironment(projectId: "app", id: "prod", name: awkward[0], actor: Self.admin)
            #expect(try await store.project(id: "app")?.name == awkward[1])
            #expect(try await store.environment(projectId: "app", id: "prod")?.name == awkward[0])

            let template = ConfigTemplate(
                parameters: awkward.enumerated().map { index, text in
                    TemplateParameter(
                        key: "p\(index)",
                        defaultValue: .value(text),
                        description: text.isEmpty ? nil : text
                    )
                },
                version: TemplateVersion(description: awkward[3])
            )
            let actor = Actor(keyId: "k_x", name: awkward[2])
            _ = try await store.publish(
                projectId: "app",
                environmentId: "prod",
                template: template,
                expectedVersion: 0,
                actor: actor
            )
            let read = try #require(try await store.version(projectId: "app", environmentId: "prod", number: 1))
            #expect(read.template.parameters.map { $0.defaultValue?.stringValue } == awkward)
            #expect(read.template.parameters.map(\.description) == awkward.map { $0.isEmpty ? nil : $0 })
            #expect(read.template.version?.description == awkward[3])
            #expect(read.template.version?.updateUser?.name == awkward[2])
            let listed = try await store.versions(projectId: "app", environmentId: "prod", query: VersionQuery())
            #expect(listed.items.first?.description == awkward[3])
            #expect(listed.items.first?.updateUser?.name == awkward[2])
            let entries = try await store.audit(projectId: "app", environmentId: nil, pageSize: 10, pageToken: nil)
            #expect(entries.items.last?.actor.name == awkward[2])
            #expect(entries.items.first?.actor.name == awkward[2])
        }
    }
}
