import Foundation
import Testing
import VaneCore

@testable import Vane

// Launching and killing a process needs Foundation's Process: macOS and Linux, not the devices.
#if os(macOS) || os(Linux)
/// The SDK's cache file when the app dies mid-write: a real process, killed with SIGKILL.
@Suite(.serialized) struct SDKCrashTests {
    /// `vane-cache-writer`, built into the same products folder as the tests (the test target
    /// depends on it): beside the test executable (Linux), or beside the `.xctest` bundle
    /// (macOS, where the tests run inside `xctest` or `swiftpm-testing-helper`), whatever the
    /// build folder and configuration are.
    static let writer: URL = {
        var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        // The bundle holding this test code: `….xctest`, inside the products folder.
        let testBundle = Bundle(for: ProductsFolderMarker.self).bundleURL
        if testBundle.pathExtension == "xctest" { folders.append(testBundle.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        folders.append(Bundle.main.bundleURL)
        let candidates = folders.map { $0.appendingPathComponent("vane-cache-writer") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    private final class ProductsFolderMarker {}

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
            #expect(client.string(forKey: "key_1999", default: "") == "g\(version)")
            client.waitForWrites()  // the clean-up runs off the caller's thread
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
#endif
