import Foundation
import TestSupport
import Testing
import Vane
import VaneCore

/// The server-side local-evaluation client and the example app, against a real `vane serve`.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SDKServerSideTests {
    @Test func localEvaluationDownloadsOnceAndEvaluatesInProcess() async throws {
        try await SDKHarness.with { harness in
            let created = try await harness.server.run([
                "keys", "create", "--role", "server", "--name", "backend", "--json",
            ])
            let serverKey = try #require(try JSONValue.parse(created.stdout).objectValue?["key"]?.stringValue)
            var configuration = LocalEvaluationClient.Configuration(
                serverURL: harness.proxy.url,
                project: "demo",
                environment: "production",
                serverKey: serverKey,
                pollInterval: 0.1
            )
            // Polling only: this test counts the proxy's requests, and the fault proxy buffers whole
            // responses, so it cannot carry an event stream (ServerSDKTests cover the stream).
            configuration.followsEventStream = false
            let flags = LocalEvaluationClient(configuration: configuration)
            #expect(flags.evaluate(EvaluationContext()).string(forKey: "banner_text", default: "none") == "none")
            #expect(try await flags.refresh())
            #expect(flags.templateVersion == 1)
            let german = flags.evaluate(EvaluationContext(randomizationId: "u1", attributes: ["device.country": "de"]))
            #expect(german.string(forKey: "banner_text", default: "") == "Willkommen bei Vane!")
            let other = flags.evaluate(EvaluationContext(randomizationId: "u1", attributes: ["device.country": "fr"]))
            #expect(other.string(forKey: "banner_text", default: "") == "Welcome to Vane!")
            let requests = harness.proxy.received.count
            for index in 0..<100 { _ = flags.evaluate(EvaluationContext(randomizationId: "u\(index)")) }
            #expect(harness.proxy.received.count == requests, "no network per evaluation")

            #expect(try await flags.refresh() == false, "unchanged: a 304")
            #expect(harness.proxy.received.last?.status == 304)

            // Background polling picks up a publish.
            let poller = Task { await flags.run() }
            try await harness.publish(#"{"parameters": {"banner_text": {"defaultValue": {"value": "v2"}}}}"#)
            for _ in 0..<100 where flags.templateVersion != 2 { try await Task.sleep(nanoseconds: 50_000_000) }
            poller.cancel()
            #expect(flags.templateVersion == 2)
            #expect(flags.evaluate(EvaluationContext()).string(forKey: "banner_text", default: "") == "v2")

            // A failed refresh keeps the template in use.
            harness.proxy.set(.respond(status: 503, headers: ["Retry-After": "5"], body: ""))
            await #expect(throws: VaneError.self) { try await flags.refresh() }
            #expect(flags.templateVersion == 2)

            // A client key cannot download templates.
            let wrong = LocalEvaluationClient(
                configuration: LocalEvaluationClient.Configuration(
                    serverURL: URL(string: harness.server.url) ?? harness.proxy.url,
                    project: "demo",
                    environment: "production",
                    serverKey: harness.clientKey
                )
            )
            do {
                try await wrong.refresh()
                Issue.record("a client key downloaded the template")
            } catch {
                if case VaneError.rejected(403, _) = error {} else { Issue.record("unexpected \(error)") }
            }
        }
    }

    @Test func theExampleAppReadsItsFlagsThroughTheSDK() async throws {
        try await SDKHarness.with { harness in
            func run(_ arguments: [String]) async throws -> String {
                try await SDKExperimentTests.launchApp(
                    server: harness.server.url,
                    key: harness.clientKey,
                    storage: harness.directory.appendingPathComponent("example"),
                    arguments
                )
            }
            let first = try await run(["--country", "de"])
            #expect(first.contains("banner_text      = Welcome (bundled default) (default)"))
            #expect(first.contains("banner_text      = Willkommen bei Vane! (remote)"))
            #expect(first.contains("settings_layout  = account, notifications, privacy, labs"))
            let second = try await run(["--override", "payments_enabled=false"])
            let beforeFetch = second.components(separatedBy: "After activating").first ?? ""
            #expect(beforeFetch.contains("Willkommen bei Vane! (remote)"), "the second launch starts from the cache")
            #expect(beforeFetch.contains("payments_enabled = false (override)"))
        }
    }
}
