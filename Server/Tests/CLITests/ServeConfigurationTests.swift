import Foundation
import TestSupport
import Testing

/// `vane serve` validates its merged configuration once, whatever set it: an option or a
/// `VANE_*` variable out of range stops it before it opens anything, naming the setting the way
/// it was given.
@Suite(.timeLimit(.minutes(5))) struct ServeConfigurationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String] = []
        var environment: [String: String] = [:]
        /// What standard error must say.
        var message: String

        var testDescription: String { "\(arguments) \(environment)" }
    }

    static let cases: [Case] = [
        // Each of these was accepted before and broke the server later (issue #13).
        Case(environment: ["VANE_RETAIN_VERSIONS": "0"], message: "VANE_RETAIN_VERSIONS must be at least 1"),
        Case(arguments: ["--retain-versions", "0"], message: "--retain-versions must be at least 1"),
        Case(environment: ["VANE_STREAM_HEARTBEAT": "-1"], message: "VANE_STREAM_HEARTBEAT must be from 0.05 to 3600"),
        Case(environment: ["VANE_STREAM_HEARTBEAT": "nan"], message: "VANE_STREAM_HEARTBEAT must be from 0.05 to 3600"),
        Case(environment: ["VANE_RATE_LIMIT": "1e-300"], message: "VANE_RATE_LIMIT must be 0 (off) or from 0.01"),
        Case(environment: ["VANE_RATE_LIMIT": "nan"], message: "VANE_RATE_LIMIT must be 0 (off) or from 0.01"),
        Case(environment: ["VANE_RATE_LIMIT": "inf"], message: "VANE_RATE_LIMIT must be 0 (off) or from 0.01"),
        Case(environment: ["VANE_RATE_LIMIT": "lots"], message: #"VANE_RATE_LIMIT must be a number, found "lots""#),
        Case(environment: ["VANE_PORT": "70000"], message: "VANE_PORT must be from 0 to 65535"),
        Case(environment: ["VANE_IDLE_TIMEOUT": "0"], message: "VANE_IDLE_TIMEOUT must be from 1 to 86400"),
        Case(arguments: ["--max-connections", "1"], message: "--max-connections must be from 16"),
        Case(environment: ["VANE_LOG_LEVEL": "loud"], message: "VANE_LOG_LEVEL must be one of trace, debug"),
    ]

    @Test(arguments: cases)
    func aSettingOutOfRangeStopsTheServerBeforeItStarts(_ refused: Case) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-config-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        // `--port 0` unless the case sets the port itself (an option would override it).
        let port = refused.environment["VANE_PORT"] == nil ? ["--port", "0"] : []
        let output = try await CLIRunner.run(
            ["serve", "--host", "127.0.0.1", "--data-dir", directory.path] + port + refused.arguments,
            environment: refused.environment.merging(["VANE_NONE": "1"]) { old, _ in old },
            timeout: 30
        )
        #expect(output.status != 0)
        #expect(output.stderr.contains(refused.message), "\(output.stderr)")
        #expect(!output.stdout.contains("Vane is serving"), "\(output.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory.path), "nothing was created")
    }

    @Test func everyProblemIsNamedAtOnce() async throws {
        let output = try await CLIRunner.run(
            ["serve", "--port", "0", "--data-dir", "/nonexistent/never"],
            environment: ["VANE_RETAIN_VERSIONS": "0", "VANE_STREAM_HEARTBEAT": "0"],
            timeout: 30
        )
        #expect(output.status != 0)
        #expect(output.stderr.contains("VANE_RETAIN_VERSIONS must be at least 1"), "\(output.stderr)")
        #expect(output.stderr.contains("VANE_STREAM_HEARTBEAT must be from 0.05"), "\(output.stderr)")
    }
}
