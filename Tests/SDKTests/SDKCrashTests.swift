import Foundation
import Testing
import VaneCore

@testable import Vane

/// The SDK's cache file when the app dies mid-write: a real process, killed with SIGKILL.
@Suite(.serialized) struct SDKCrashTests {
    /// `vane-cache-writer`, built next to the tests (the test target depends on it).
    static let writer: URL = {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("vane-cache-writer")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug/vane-cache-writer")
    }()

    @Test func aProcessKilledBetweenWritesLeavesAConsistentCache() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var versionsSeen: [Int64] = []
        var killedMidWrite = 0
        for round in 0..<10 {
            let output = directory.appendingPathComponent("writer-\(round).log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = Self.writer
            process.arguments = [directory.appendingPathComponent("store").path]
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, (try? String(contentsOf: output, encoding: .utf8))?.contains("ready") != true {
                Thread.sleep(forTimeInterval: 0.01)
            }
            // Wait until it has activated once (a busy machine can take longer than the pauses
            // below), then let it write for a while: each round kills it at a different point of a write.
            let cacheURL = directory.appendingPathComponent("store/config.vanecache")
            while Date() < deadline,
                (try? ConfigCacheFile(data: [UInt8](Data(contentsOf: cacheURL))))?.active == nil
            {
                Thread.sleep(forTimeInterval: 0.01)
            }
            Thread.sleep(forTimeInterval: 0.1 + Double(round % 5) * 0.06)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            let file = try ConfigCacheFile(data: [UInt8](try Data(contentsOf: cacheURL)))
            let active = try #require(file.active, "round \(round): no active config")
            let version = active.templateVersion
            // The ETag and every value belong to the same generation: never a stale pairing.
            #expect(active.etag == "\"g\(version)\"", "round \(round)")
            #expect(active.entries.count == 2_000)
            #expect(active.entries.values.allSatisfy { $0 == "g\(version)" }, "round \(round): mixed generations")
            if let fetched = file.fetched {
                #expect(fetched.etag == "\"g\(fetched.templateVersion)\"")
                #expect(fetched.entries.values.allSatisfy { $0 == "g\(fetched.templateVersion)" })
            }

            let store = directory.appendingPathComponent("store").path
            if try FileManager.default.contentsOfDirectory(atPath: store).contains(where: { $0.hasSuffix(".tmp") }) {
                killedMidWrite += 1
            }

            // A relaunch reads it, and cleans up what the kill left half-done.
            let client = VaneClient(
                configuration: VaneClient.Configuration(
                    serverURL: URL(fileURLWithPath: "/"),
                    project: "crash",
                    environment: "test",
                    clientKey: "unused",
                    context: ClientContext(),
                    storage: .directory(directory.appendingPathComponent("store"))
                )
            )
            #expect(client.activeTemplateVersion == version)
            #expect(client.string("key_1999", default: "") == "g\(version)")
            let leftovers = try FileManager.default.contentsOfDirectory(
                atPath: directory.appendingPathComponent("store").path
            )
            .filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)
            versionsSeen.append(version)
        }
        #expect(versionsSeen.allSatisfy { $0 > 0 }, "the writer made progress: \(versionsSeen)")
        print("killed mid-write in \(killedMidWrite) of 10 rounds; versions \(versionsSeen)")
    }
}
