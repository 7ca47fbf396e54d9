// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
import Configuration
import Foundation
import Logging
import MetricsTestKit
import ServiceLifecycle
import Testing
import Vane
import VaneConfiguration
import VaneCore
import VaneService

/// The service and the provider over a scripted server (issue #28): downloads, publishes announced
/// on the event stream, what watchers and snapshots see, metrics, and shutdown with the service
/// group. The same against a real `vane serve` is in Server/Tests/ServerSDKTests.
@Suite(.timeLimit(.minutes(2))) struct VaneServiceTests {
    @available(VaneServerSDK, *)
    static let dimensions = [("project", "shop"), ("environment", "prod")]

    @available(VaneServerSDK, *)
    static func service(_ server: ScriptedVaneServer, metrics: TestMetrics = TestMetrics()) throws -> VaneService {
        var client = LocalEvaluationClient.Configuration(
            serverURL: try #require(URL(string: "http://127.0.0.1:9")),
            project: "shop",
            environment: "prod",
            serverKey: "vane_server_secret",
            pollInterval: 3600  // a download sooner than this came through the stream
        )
        client.reconnect = BackoffPolicy(initial: 0.01, maximum: 0.05, jitter: 0)
        return VaneService(
            configuration: VaneService.Configuration(client: client, metricsFactory: metrics, transport: server),
            logger: Logger(label: "vane.service.test")
        )
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theServiceDownloadsFollowsTheStreamAndStopsWithItsGroup() async throws {
        let server = ScriptedVaneServer()
        server.serve(["checkout_new_flow": "false", "retry_limit": "4"], version: 2)
        let stream = server.openNextStream()
        let metrics = TestMetrics()
        let service = try Self.service(server, metrics: metrics)
        let config = ConfigReader(provider: VaneConfigProvider(service: service))
        #expect(config.bool(forKey: "checkout.new-flow", default: true), "nothing downloaded yet: the default")
        #expect(service.client.startupTemplate == nil)

        let group = ServiceGroup(services: [service], logger: Logger(label: "test.group"))
        let running = Task { try await group.run() }
        #expect(await eventually { service.client.templateVersion == 2 && service.client.streamState == .connected })
        #expect(!config.bool(forKey: "checkout.new-flow", default: true))
        #expect(config.int(forKey: "retry.limit") == 4)
        let download = try #require(server.requests(to: .compiledTemplate).first)
        #expect(download.headers["Authorization"] == "Bearer vane_server_secret")
        // The stream and the first download start together, so the first connection may come
        // before version 2 is held (no Last-Event-ID; the server's catch-up announces the newest).
        // Whatever it sends is never a version the client does not hold.
        let streamRequests = server.requests(to: .stream)
        #expect(!streamRequests.isEmpty)
        #expect(streamRequests.allSatisfy { [nil, "2"].contains($0.headers["Last-Event-ID"]) })
        #expect(
            await eventually {
                (try? metrics.expectGauge(VaneService.MetricLabel.streamConnected, Self.dimensions).lastValue) == 1
            }
        )
        #expect(
            await eventually {
                (try? metrics.expectGauge(VaneService.MetricLabel.templateVersion, Self.dimensions).lastValue) == 2
            }
        )

        // A publish announced on the stream is downloaded at once, with the ETag held.
        server.serve(["checkout_new_flow": "true", "retry_limit": "4"], version: 3)
        stream.yield(Data(VersionEvent(templateVersion: 3).text.utf8))
        #expect(await eventually { service.client.templateVersion == 3 })
        #expect(config.bool(forKey: "checkout.new-flow", default: false))
        #expect(server.requests(to: .compiledTemplate).last?.headers["If-None-Match"] == "\"v2\"")
        #expect(metrics.counterTotal(label: VaneService.MetricLabel.evaluations) >= 4)

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(service.client.streamState == .stopped)
        #expect(try metrics.expectGauge(VaneService.MetricLabel.streamConnected, Self.dimensions).lastValue == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aWatcherSeesANewTemplateOnlyWhenItsValueChanges() async throws {
        let server = ScriptedVaneServer()
        server.serve(["banner_text": "Welcome!", "retry_limit": "4"], version: 2)
        server.serve(["banner_text": "Welcome!", "retry_limit": "5"], version: 3)
        server.serve(["banner_text": "Hello again", "retry_limit": "5"], version: 4)
        let service = try Self.service(server)
        let provider = VaneConfigProvider(service: service)
        try await service.client.refresh()
        let seen = try await ConfigReader(provider: provider).watchString(forKey: "banner.text") { updates in
            var seen: [String?] = []
            for await value in updates {
                seen.append(value)
                if seen.count == 1 {
                    let third = try await service.client.refresh()
                    let fourth = try await service.client.refresh()
                    #expect(third, "version 3: the banner is the same")
                    #expect(fourth, "version 4: a new banner")
                }
                if seen.count == 2 { break }
            }
            return seen
        }
        #expect(seen == ["Welcome!", "Hello again"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aSnapshotReadsOneTemplateWhateverArrivesLater() async throws {
        let server = ScriptedVaneServer()
        server.serve(["banner_text": "first", "retry_limit": "1"], version: 2)
        server.serve(["banner_text": "second", "retry_limit": "2"], version: 3)
        let service = try Self.service(server)
        let provider = VaneConfigProvider(service: service)
        try await service.client.refresh()
        let snapshot = provider.snapshot()
        try await service.client.refresh()
        #expect(
            try snapshot.value(forKey: AbsoluteConfigKey(["banner", "text"]), type: .string).value?.content
                == .string("first")
        )
        #expect(
            try snapshot.value(forKey: AbsoluteConfigKey(["retry", "limit"]), type: .int).value?.content == .int(1)
        )
        #expect(
            try provider.snapshot().value(forKey: AbsoluteConfigKey(["banner", "text"]), type: .string).value?.content
                == .string("second")
        )
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aKeyVaneDoesNotHaveIsLeftToTheNextProvider() async throws {
        let server = ScriptedVaneServer()
        server.serve(["retry_limit": "4"], version: 2)
        let service = try Self.service(server)
        try await service.client.refresh()
        let config = ConfigReader(providers: [
            VaneConfigProvider(service: service),
            InMemoryProvider(values: [["retry", "limit"]: 9, ["http", "timeout"]: 30]),
        ])
        #expect(config.int(forKey: "retry.limit") == 4, "Vane first")
        #expect(config.int(forKey: "http.timeout") == 30, "then the next provider")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aFailedDownloadKeepsTheTemplateInUse() async throws {
        let server = ScriptedVaneServer()
        server.serve(["retry_limit": "4"], version: 2)
        server.answer(status: 503, headers: ["Retry-After": "120"])
        let service = try Self.service(server)
        try await service.client.refresh()
        await #expect {
            try await service.client.refresh()
        } throws: { error in
            guard case VaneError.serverUnavailable(503, _) = error else { return false }
            return true
        }
        #expect(service.client.templateVersion == 2)
        #expect(ConfigReader(provider: VaneConfigProvider(service: service)).int(forKey: "retry.limit") == 4)
        #expect(try await service.client.refresh() == false, "then a 304: nothing new")
    }
}
#endif
