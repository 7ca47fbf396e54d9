import Foundation
import TestSupport
import Testing
import VaneCore

/// Two `vane serve` processes on one SQLite data directory (a second server started by mistake,
/// or a deploy that overlaps the old process): no publish may be lost or numbered twice.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SharedSQLiteTests {
    static let adminKey = CrashTests.adminKey
    static let environmentPath = CrashTests.environmentPath

    @Test(.timeLimit(.minutes(1)))
    func twoProcessesOnOneFileNeverLoseAPublish() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-shared-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = ["--data-dir", directory.path, "--admin-key", Self.adminKey, "--no-demo"]
        let logs = directory.appendingPathComponent("logs")
        let first = try await CrashServeProcess.start(arguments: arguments, outputDirectory: logs)
        defer { first.kill() }
        let second = try await CrashServeProcess.start(arguments: arguments, outputDirectory: logs)
        defer { second.kill() }
        #expect(try await first.send("POST", "/v1/projects", key: Self.adminKey, json: ["id": "crash"]).status == 201)
        let environment = try await second.send(
            "POST",
            "/v1/projects/crash/environments",
            key: Self.adminKey,
            json: ["id": "prod"]
        )
        #expect(environment.status == 201, "the second process sees the first one's project: \(environment.text)")

        // Forced publishes from both processes at once: every one is stored under its own number.
        let acknowledged = try await withThrowingTaskGroup(of: [Int64: JSONValue].self) { group in
            for (index, server) in [first, second, first, second].enumerated() {
                group.addTask {
                    var mine: [Int64: JSONValue] = [:]
                    for publish in 0..<8 {
                        let parameters = CrashTests.parameters(round: 0, task: index, index: publish)
                        let reply = try await Self.publish(parameters, through: server, ifMatch: "*")
                        #expect(reply.status == 200, "\(reply.text)")
                        if let number = Self.versionNumber(reply) { mine[number] = parameters }
                    }
                    return mine
                }
            }
            var all: [Int64: JSONValue] = [:]
            for try await mine in group {
                for (number, parameters) in mine {
                    #expect(all[number] == nil, "version \(number) was acknowledged twice")
                    all[number] = parameters
                }
            }
            return all
        }
        #expect(acknowledged.count == 32)
        try await CrashTests.verify(server: first, acknowledged: acknowledged, round: 0)

        // Conditional publishes racing with the same ETag, one through each process: one wins.
        for round in 0..<5 {
            let current = try await first.send("GET", Self.environmentPath + "/template", key: Self.adminKey)
            let etag = try #require(current.header("ETag"), "round \(round)")
            async let a = Self.publish(
                CrashTests.parameters(round: round + 1, task: 0, index: 0),
                through: first,
                ifMatch: etag
            )
            async let b = Self.publish(
                CrashTests.parameters(round: round + 1, task: 1, index: 0),
                through: second,
                ifMatch: etag
            )
            let statuses = try await [a.status, b.status].sorted()
            #expect(statuses == [200, 412], "round \(round): exactly one of two racing publishes wins")
        }
        first.terminate()
        second.terminate()
        try await CrashTests.checkIntegrity(path: directory.appendingPathComponent("vane.sqlite").path)
    }

    /// `PUT …/template` with these parameters through one of the processes.
    static func publish(
        _ parameters: JSONValue,
        through server: CrashServeProcess,
        ifMatch: String
    ) async throws -> CrashServeProcess.Reply {
        try await server.send(
            "PUT",
            environmentPath + "/template",
            key: adminKey,
            json: ["parameters": parameters],
            headers: ["If-Match": ifMatch]
        )
    }

    static func versionNumber(_ reply: CrashServeProcess.Reply) -> Int64? {
        reply.json?.objectValue?["version"]?.objectValue?["versionNumber"]?.stringValue.flatMap { Int64($0) }
    }
}
