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
        Case(
            environment: ["VANE_SQLITE_BUSY_TIMEOUT": "0"],
            message: "VANE_SQLITE_BUSY_TIMEOUT must be from 0.01 to 600 seconds"
        ),
        Case(environment: ["VANE_LOG_LEVEL": "loud"], message: "VANE_LOG_LEVEL must be one of trace, debug"),
        Case(arguments: ["--admin-key", "a"], message: "--admin-key must be at least 32 characters, found 1"),
        Case(
            environment: ["VANE_ADMIN_KEY": String(repeating: "a", count: 40)],
            message: "VANE_ADMIN_KEY must not repeat a few characters"
        ),
        Case(environment: ["VANE_SECRET": "short"], message: "VANE_SECRET must be at least 32 characters"),
        Case(
            arguments: ["--trusted-proxy", "proxy.internal"],
            message: #"--trusted-proxy must list IP addresses or CIDR ranges (10.0.0.0/8, ::1), found "proxy.internal""#
        ),
        Case(environment: ["VANE_ADDRESS_RATE_LIMIT": "-5"], message: "VANE_ADDRESS_RATE_LIMIT must be 0 (off)"),
        Case(
            arguments: ["--event-address-rate-limit", "nan"],
            message: "--event-address-rate-limit must be 0 (off) or from 0.01"
        ),
        Case(environment: ["VANE_EVENT_KEY_RATE_LIMIT": "-1"], message: "VANE_EVENT_KEY_RATE_LIMIT must be 0 (off)"),
        Case(
            environment: ["VANE_EVENT_QUOTA_PER_DAY": "-1"],
            message: "VANE_EVENT_QUOTA_PER_DAY must be 0 (no quota) or from 1"
        ),
        Case(
            environment: ["VANE_MAX_STREAMS_PER_ADDRESS": "0"],
            message: "VANE_MAX_STREAMS_PER_ADDRESS must be from 1"
        ),
        Case(arguments: ["--tls-cert", "cert.pem"], message: "--tls-key must be given with a TLS certificate"),
        Case(arguments: ["--health-port", "70000"], message: "--health-port must be from 0 to 65535"),
    ]

    @Test func anAdminKeyFileIsReadAndItsKeyWorks() async throws {
        let key = "vane_admin_from-a-file-0123456789abcdefghijklmnop"
        let file = try CLIRunner.temporaryFile(key + "\n")
        let server = try await ServeProcess.start(arguments: ["--admin-key-file", file])
        defer { server.stop() }
        // The file's key wins over the --admin-key the test harness passes.
        let listed = try await server.run(["keys", "list"], key: key)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("admin (--admin-key)"), "\(listed.stdout)")
    }

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
