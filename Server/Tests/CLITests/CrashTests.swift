import Foundation
import Logging
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// Crash safety with real processes: `vane serve` is killed with SIGKILL in the middle of a burst
/// of publishes and started again on the same data. Every publish that was answered 200 must be
/// there, whole, and the version numbers must have no gaps.
@Suite(.serialized, .timeLimit(.minutes(8))) struct CrashTests {
    enum Engine: String, CaseIterable, Sendable, CustomStringConvertible {
        case sqlite
        case postgres
        var description: String { rawValue }
        /// SQLite alone when the run leaves PostgreSQL out (`scripts/test --quick`, ``TestEngines``).
        static var allCases: [Engine] { TestEngines.postgreSQLIsOn ? [.sqlite, .postgres] : [.sqlite] }
    }

    static let adminKey = "vane_admin_crash-test-key-000000000000000000000000"
    static let environmentPath = "/v1/projects/crash/environments/prod"
    /// After how many acknowledged publishes each round kills the server: early, middle, late.
    static let killAfter = [2, 12, 30]
    /// Concurrent publishers per round.
    static let publishers = 4

    @Test(.timeLimit(.minutes(4)), arguments: Engine.allCases)
    func acknowledgedPublishesSurviveSIGKILL(engine: Engine) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-crash-\(UUID().uuidString)")
        var arguments = ["--data-dir", directory.path, "--admin-key", Self.adminKey, "--no-demo"]
        if engine == .postgres { arguments += ["--database", try await Self.freshPostgresURL()] }
        let logs = directory.appendingPathComponent("logs")

        var server = try await CrashServeProcess.start(arguments: arguments, outputDirectory: logs)
        defer { server.kill() }
        let project = try await server.send("POST", "/v1/projects", key: Self.adminKey, json: ["id": "crash"])
        try #require(project.status == 201, "\(project.text)")
        let environment = try await server.send(
            "POST",
            "/v1/projects/crash/environments",
            key: Self.adminKey,
            json: ["id": "prod"]
        )
        try #require(environment.status == 201, "\(environment.text)")

        var acknowledged: [Int64: JSONValue] = [:]
        for (round, target) in Self.killAfter.enumerated() {
            let burst = try await Self.burst(server: server, round: round, killAfter: target)
            #expect(!server.isRunning, "round \(round): the server should have been killed")
            #expect(burst.unexpected.isEmpty, "round \(round): \(burst.unexpected) \(server.log)")
            #expect(burst.acknowledged.count >= target, "round \(round): only \(burst.acknowledged.count) publishes")
            for (number, parameters) in burst.acknowledged {
                // Two 200s with one number would mean a lost update.
                #expect(acknowledged[number] == nil, "version \(number) was acknowledged twice")
                acknowledged[number] = parameters
            }

            server = try await CrashServeProcess.start(arguments: arguments, outputDirectory: logs)
            try await Self.verify(server: server, acknowledged: acknowledged, round: round)
        }
        server.terminate()
        #expect(server.process.terminationStatus == 0, "vane serve did not stop cleanly on SIGTERM: \(server.log)")
        if engine == .sqlite {
            try await Self.checkIntegrity(path: directory.appendingPathComponent("vane.sqlite").path)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server answers ready, and every acknowledged version is there with what was sent.
    static func verify(server: CrashServeProcess, acknowledged: [Int64: JSONValue], round: Int) async throws {
        let ready = try await server.send("GET", "/readyz", key: nil)
        #expect(ready.status == 200 && ready.json == ["status": "ready"], "round \(round): \(ready.text)")

        let list = try await server.send("GET", environmentPath + "/versions?pageSize=300", key: adminKey)
        try #require(list.status == 200, "round \(round): \(list.text)")
        let numbers = (list.json?.objectValue?["versions"]?.arrayValue ?? []).compactMap {
            $0.objectValue?["versionNumber"]?.stringValue.flatMap { Int64($0) }
        }
        let newest = numbers.max() ?? 0
        #expect(numbers.sorted() == (newest == 0 ? [] : Array(1...newest)), "round \(round): numbers have gaps")
        #expect(newest >= acknowledged.keys.max() ?? 0)

        for (number, parameters) in acknowledged.sorted(by: { $0.key < $1.key }) {
            let reply = try await server.send(
                "GET",
                environmentPath + "/template?versionNumber=\(number)",
                key: adminKey
            )
            #expect(reply.status == 200, "round \(round): version \(number): \(reply.text)")
            #expect(
                reply.json?.objectValue?["parameters"] == parameters,
                "round \(round): version \(number) differs from what was acknowledged"
            )
        }
    }

    struct BurstResult: Sendable {
        var acknowledged: [Int64: JSONValue] = [:]
        var unexpected: [String] = []
    }

    /// Records acknowledgements and decides when to kill.
    actor Burst {
        let target: Int
        var result = BurstResult()
        var killed = false

        init(target: Int) { self.target = target }

        /// Records a 200; true when this one reaches the target and the caller must kill.
        func acknowledge(_ number: Int64, _ parameters: JSONValue) -> Bool {
            if result.acknowledged[number] != nil { result.unexpected.append("version \(number) acknowledged twice") }
            result.acknowledged[number] = parameters
            return markKilled(when: result.acknowledged.count >= target)
        }

        /// A failure is expected once the kill started, and a bug before; then the caller kills
        /// at once (true), so the test ends quickly.
        func failed(_ message: String) -> Bool {
            guard !killed else { return false }
            result.unexpected.append(message)
            return markKilled(when: true)
        }

        func markKilled(when condition: Bool) -> Bool {
            guard condition, !killed else { return false }
            killed = true
            return true
        }

        var isKilled: Bool { killed }
    }

    /// Publishes from several tasks at once until the server is killed after `killAfter` 200s
    /// (or, as a safety net against a hang, once 15 seconds pass without a new acknowledgement:
    /// a slow machine is not a failure, a server that stops answering is).
    static func burst(server: CrashServeProcess, round: Int, killAfter: Int) async throws -> BurstResult {
        let burst = Burst(target: killAfter)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<publishers {
                group.addTask {
                    var index = 0
                    while await !burst.isKilled {
                        index += 1
                        let parameters = parameters(round: round, task: task, index: index)
                        do {
                            let reply = try await server.send(
                                "PUT",
                                environmentPath + "/template",
                                key: adminKey,
                                json: ["parameters": parameters],
                                headers: ["If-Match": "*"]
                            )
                            guard reply.status == 200,
                                let number = reply.json?.objectValue?["version"]?.objectValue?["versionNumber"]?
                                    .stringValue.flatMap({ Int64($0) })
                            else {
                                if await burst.failed("PUT answered \(reply.status): \(reply.text)") {
                                    server.kill()
                                }
                                return
                            }
                            if await burst.acknowledge(number, parameters) { server.kill() }
                        } catch {
                            if await burst.failed("PUT failed: \(error)") { server.kill() }
                            return
                        }
                    }
                }
            }
            group.addTask {
                var seen = 0
                var deadline = ContinuousClock.now + .seconds(15)
                while await !burst.isKilled {
                    let count = await burst.result.acknowledged.count
                    if count != seen {
                        seen = count
                        deadline = ContinuousClock.now + .seconds(15)
                    }
                    if ContinuousClock.now >= deadline, await burst.markKilled(when: true) {
                        server.kill()
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        server.kill()
        return await burst.result
    }

    /// What one publish sends: unique per round, task and index, with text that must survive as is.
    static func parameters(round: Int, task: Int, index: Int) -> JSONValue {
        [
            "burst": ["defaultValue": ["value": .string("round \(round), task \(task), publish \(index)")]],
            "note": [
                "defaultValue": [
                    "value": .string(
                        "Grüße 🎉 \"quoted\" \\ back\tslash " + String(repeating: "padding-\(index) ", count: 50)
                    )
                ],
                "description": "Grüße 🎉 \"quoted\"",
            ],
        ]
    }

    // MARK: Databases

    /// A new, empty database on the test PostgreSQL server (`scripts/with-postgres` sets
    /// `VANE_TEST_POSTGRES_URL`). Fails, rather than skips, without one.
    static func freshPostgresURL() async throws -> String {
        guard let base = ProcessInfo.processInfo.environment["VANE_TEST_POSTGRES_URL"] else {
            throw CrashServeProcess.StartError(
                description:
                    "VANE_TEST_POSTGRES_URL is not set: run the tests with scripts/test (or scripts/with-postgres swift test)"
            )
        }
        let name = "vane_crash_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let engine = try await DatabaseEngine.open(.postgres(url: base), logger: Logger(label: "crash-test"))
        do {
            try await engine.withSession { database in
                try await database.raw("CREATE DATABASE \(unsafeRaw: name)").run()
            }
            try await engine.shutdown()
        } catch {
            try? await engine.shutdown()
            throw error
        }
        guard var components = URLComponents(string: base) else {
            throw CrashServeProcess.StartError(description: "bad VANE_TEST_POSTGRES_URL")
        }
        components.path = "/" + name
        return components.string ?? base
    }

    /// SQLite's own check of the file after the kills: `PRAGMA integrity_check` says "ok".
    static func checkIntegrity(path: String) async throws {
        let engine = try await DatabaseEngine.open(.sqlite(path: path), logger: Logger(label: "crash-test"))
        do {
            let result = try await engine.withSession { database in
                try await database.raw("PRAGMA integrity_check").all(decodingColumn: "integrity_check", as: String.self)
            }
            #expect(result == ["ok"])
            try await engine.shutdown()
        } catch {
            try? await engine.shutdown()
            throw error
        }
    }
}
