import Foundation
import TestSupport
import Testing
import Vane

/// A real `vane serve` with the demo project, a fault proxy in front of it, and SDK clients that
/// keep their files in a throw-away directory.
final class SDKHarness: Sendable {
    let server: ServeProcess
    let proxy: FaultProxy
    let clientKey: String
    let directory: URL

    init() async throws {
        server = try await ServeProcess.start()
        guard let key = server.demoClientKey, let upstream = URL(string: server.url) else {
            server.stop()
            throw ServeProcess.StartError(description: "vane serve printed no demo client key")
        }
        clientKey = key
        proxy = try FaultProxy(upstream: upstream)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-sdk-\(UUID().uuidString)")
    }

    /// A client of demo/production through the proxy, storing its files in `storage` (a
    /// subdirectory of the harness's directory) unless told otherwise.
    func client(
        storage: String = "app",
        context: ClientContext = ClientContext(appVersion: "2.1.0", country: "us"),
        defaults: InAppDefaults = InAppDefaults(),
        keys: [KeyDescriptor] = [],
        minimumFetchInterval: TimeInterval = 0,
        // Generous: a test about timeouts passes its own; the rest must not fail because a
        // loaded machine answered a delayed fetch late.
        timeout: TimeInterval = 60,
        backoff: BackoffPolicy = BackoffPolicy(initial: 60, maximum: 600, jitter: 0),
        serverURL: URL? = nil,
        transport: TransportKind = .urlSession,
        events: EventOptions = EventOptions(flushInterval: 0)
    ) -> VaneClient {
        VaneClient(
            configuration: VaneClient.Configuration(
                serverURL: serverURL ?? proxy.url,
                project: "demo",
                environment: "production",
                clientKey: clientKey,
                context: context,
                defaults: defaults,
                keys: keys,
                storage: .directory(directory.appendingPathComponent(storage)),
                minimumFetchInterval: minimumFetchInterval,
                timeout: timeout,
                backoff: backoff,
                events: events,
                transport: transport.make()
            )
        )
    }

    /// Publishes a template to demo/production with the CLI (forced, over whatever is there).
    func publish(_ template: String) async throws {
        let path = try CLIRunner.temporaryFile(template)
        let output = try await server.run(["publish", path, "--force"])
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Fetch requests the proxy has seen.
    var fetchRequests: [FaultProxy.Received] { proxy.received.filter { $0.path.hasSuffix("/fetch") } }

    func stop() {
        proxy.shutdown()
        let status = server.stop()
        #expect(status == 0, "vane serve exited with \(status): \(server.log)")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a body against a fresh harness and stops it afterwards.
    static func with(_ body: (SDKHarness) async throws -> Void) async throws {
        let harness = try await SDKHarness()
        do {
            try await body(harness)
        } catch {
            harness.stop()
            throw error
        }
        harness.stop()
    }
}
