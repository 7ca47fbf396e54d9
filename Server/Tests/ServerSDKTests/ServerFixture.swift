import Foundation
import Logging
import Metrics
import MetricsTestKit
import TestSupport
import Testing
import Vane
import VaneCore
import VaneService

/// A real `vane serve` (TestSupport's `ServeProcess`) with a server key for demo/production, and
/// services of the server SDK that talk to it.
final class ServerFixture: Sendable {
    let server: ServeProcess
    let serverKey: String
    let directory: URL

    init() async throws {
        server = try await ServeProcess.start()
        let created = try await server.run(["keys", "create", "--role", "server", "--name", "backend", "--json"])
        guard let key = try JSONValue.parse(created.stdout).objectValue?["key"]?.stringValue else {
            server.stop()
            throw ServeProcess.StartError(description: "vane keys create printed no key: \(created.stderr)")
        }
        serverKey = key
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-server-sdk-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    var url: URL { URL(string: server.url) ?? URL(fileURLWithPath: "/") }

    /// Publishes a template to demo/production with the CLI (forced, over whatever is there).
    func publish(_ template: String) async throws {
        let path = try CLIRunner.temporaryFile(template)
        let output = try await server.run(["publish", path, "--force"])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// A service of demo/production. Polling is slow (60 s), so anything that arrives sooner came
    /// through the event stream.
    func service(
        metrics: TestMetrics = TestMetrics(),
        serverURL: URL? = nil,
        cacheFile: URL? = nil,
        templateFile: URL? = nil
    ) -> VaneService {
        var client = LocalEvaluationClient.Configuration(
            serverURL: serverURL ?? url,
            project: "demo",
            environment: "production",
            serverKey: serverKey,
            pollInterval: 60,
            timeout: 5,
            templateFile: templateFile,
            cacheFile: cacheFile
        )
        client.reconnect = BackoffPolicy(initial: 0.2, maximum: 1, jitter: 0)
        return VaneService(
            configuration: VaneService.Configuration(client: client, metricsFactory: metrics, ageReportInterval: 0.1),
            logger: Logger(label: "vane.service.test")
        )
    }

    func stop() {
        let status = server.stop()
        #expect(status == 0, "vane serve exited with \(status): \(server.log)")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a body against a fresh fixture and stops it afterwards.
    static func with(_ body: (ServerFixture) async throws -> Void) async throws {
        let fixture = try await ServerFixture()
        do {
            try await body(fixture)
        } catch {
            fixture.stop()
            throw error
        }
        fixture.stop()
    }
}
