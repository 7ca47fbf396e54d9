import Foundation
import Logging
import SQLKit
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// The one way a version goes live: validate, compile before storing, store, serve, announce.
@Suite(.timeLimit(.minutes(5))) struct TemplatePublisherTests {
    static let production = EnvironmentKey(projectId: "app", environmentId: "prod")
    static let staging = EnvironmentKey(projectId: "app", environmentId: "staging")

    /// A publisher over a fresh store with `app/prod` and `app/staging`.
    static func withPublisher<R: Sendable>(
        _ database: TestDatabase,
        _ body: (TemplatePublisher) async throws -> R
    ) async throws -> R {
        try await ConfigStoreTests.withStore(database) { store, _ in
            try await ConfigStoreTests.makeEnvironment(store)
            try await store.createEnvironment(projectId: "app", id: "staging", name: "Staging", actor: .system)
            var logger = Logger(label: "vane-publisher-test")
            logger.logLevel = .critical
            let publisher = TemplatePublisher(
                store: store,
                cache: ServingCache(),
                events: PublishEvents(),
                logger: logger
            )
            return try await body(publisher)
        }
    }

    /// Stores a version as an older server might have, bypassing every check.
    static func storeRaw(_ store: ConfigStore, _ environment: EnvironmentKey, number: Int64, json: String) async throws
    {
        try await store.engine.withSession { database in
            try await database.raw(
                """
                INSERT INTO template_versions \
                (project_id, environment_id, version_number, update_time, update_type, update_user, template) \
                VALUES (\(bind: environment.projectId), \(bind: environment.environmentId), \(bind: number), 0, \
                'FORCED_UPDATE', 'old server', \(bind: json))
                """
            ).run()
        }
    }

    static let unparseable =
        #"{"conditions":[{"name":"c","expression":"device.os == ios"}],"parameters":{"p":{"defaultValue":{"value":"x"},"conditionalValues":{"c":{"value":"y"}}}}}"#

    @Test(arguments: TestDatabase.allCases)
    func aPublishIsStoredServedAndAnnounced(database: TestDatabase) async throws {
        try await Self.withPublisher(database) { publisher in
            let events = publisher.events.subscribe()
            let checked = try publisher.check(ConfigStoreTests.template("hello"))
            let served = try await publisher.publish(
                checked,
                to: Self.production,
                expectedVersion: 0,
                actor: ConfigStoreTests.admin
            )
            #expect(served.versionNumber == 1)
            #expect(publisher.cache.template(for: Self.production) === served)
            // Compiled before the version was stamped, served with the stamp.
            #expect(served.compiled.versionNumber == "1")
            let stored = try await publisher.store.version(projectId: "app", environmentId: "prod", number: 1)
            #expect(served.templateJSON == stored?.templateJSON)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == PublishEvent(environment: Self.production, versionNumber: 1))
        }
    }

    @Test func anInvalidTemplateIsRefusedWithEveryIssue() async throws {
        try await Self.withPublisher(.sqlite) { publisher in
            let template = try ConfigTemplate(data: Array(Self.unparseable.utf8))
            #expect(throws: PublishError.invalid(template.validate())) { try publisher.check(template) }
            // Unvalidated (a rollback), it is parsed once and refused before anything is stored.
            let unchecked = try publisher.check(template, validating: false)
            await #expect {
                try await publisher.publish(unchecked, to: Self.production, expectedVersion: nil, actor: .system)
            } throws: { error in
                guard case .doesNotCompile(let failure) = error as? PublishError else { return false }
                return failure.issues.map(\.path.description) == ["conditions[0].expression"]
            }
            #expect(try await publisher.store.currentVersionNumber(projectId: "app", environmentId: "prod") == 0)
            #expect(publisher.cache.template(for: Self.production) == nil)
        }
    }

    @Test func aStoredVersionThatDoesNotCompileKeepsNoOtherEnvironmentFromBeingServed() async throws {
        try await Self.withPublisher(.sqlite) { publisher in
            try await Self.storeRaw(publisher.store, Self.production, number: 1, json: Self.unparseable)
            let good = ConfigStoreTests.template("fine").serialized(.compact)
            try await Self.storeRaw(publisher.store, Self.staging, number: 4, json: good)
            try await publisher.loadAll()
            #expect(publisher.cache.template(for: Self.production) == nil)
            #expect(publisher.cache.template(for: Self.staging)?.versionNumber == 4)
            try await Self.storeRaw(publisher.store, Self.staging, number: 5, json: good)
            try await publisher.catchUp()
            #expect(publisher.cache.versionNumbers == [Self.staging: 5])
        }
    }

    @Test func aConflictAndAMissingEnvironmentAreStorageErrors() async throws {
        try await Self.withPublisher(.sqlite) { publisher in
            let checked = try publisher.check(ConfigStoreTests.template("a"))
            try await publisher.publish(checked, to: Self.production, expectedVersion: 0, actor: .system)
            await #expect(throws: PublishError.storage(.versionConflict(expected: 0, current: 1))) {
                try await publisher.publish(checked, to: Self.production, expectedVersion: 0, actor: .system)
            }
            let missing = EnvironmentKey(projectId: "app", environmentId: "nope")
            await #expect(throws: PublishError.storage(.environmentNotFound(project: "app", environment: "nope"))) {
                try await publisher.publish(checked, to: missing, expectedVersion: nil, actor: .system)
            }
        }
    }

    @Test func aRollbackToAVersionThatDoesNotCompileStoresNothing() async throws {
        try await TestServer.run(.sqlite) { server in
            let demo = EnvironmentKey(projectId: "demo", environmentId: "production")
            let store = server.application.store
            try await Self.storeRaw(store, demo, number: 2, json: Self.unparseable)
            try await Self.storeRaw(store, demo, number: 3, json: ConfigStoreTests.template("ok").serialized(.compact))
            let reply = try await server.send(.post, TestServer.demoPath + "/rollback", json: ["versionNumber": "2"])
            #expect(reply.status == .badRequest)
            #expect(reply.errorMessage?.contains("does not compile") == true)
            #expect(try await store.currentVersionNumber(projectId: "demo", environmentId: "production") == 3)
        }
    }
}
