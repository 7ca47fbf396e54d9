import Configuration
import Foundation
import Logging
import MetricsTestKit
import ServiceLifecycle
import TestSupport
import Testing
import Vane
import VaneConfiguration
import VaneCore
import VaneService

/// The provider and the service against a real `vane serve`: key mapping, targeting by context,
/// publishes arriving through the event stream, metrics, and shutdown with the service group.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ProviderLiveTests {
    static func template(newFlowDefault: Bool, banner: String = "Welcome!") -> String {
        """
        {
          "conditions": [{"name": "dach", "expression": "device.country in ['de', 'at', 'ch']"}],
          "parameters": {
            "checkout_new_flow": {
              "defaultValue": {"value": "\(newFlowDefault)"},
              "conditionalValues": {"dach": {"value": "true"}}
            },
            "banner_text": {"defaultValue": {"value": "\(banner)"}, "conditionalValues": {"dach": {"value": "Willkommen!"}}},
            "retry_limit": {"defaultValue": {"value": "4"}}
          }
        }
        """
    }

    static let germany: [String: ConfigContextValue] = [
        "randomizationId": .string("u1"), "device.country": .string("de"),
    ]
    static let france: [String: ConfigContextValue] = [
        "randomizationId": .string("u1"), "device.country": .string("fr"),
    ]

    /// Well under the fixture's 60 s poll interval: a delivery faster than this came through the stream.
    static let streamNotPoll: TimeInterval = 10

    @Test func publishesReachWatchersAndSnapshotsThroughTheStreamAndTheServiceStopsWithItsGroup() async throws {
        try await ServerFixture.with { fixture in
            try await fixture.publish(Self.template(newFlowDefault: false))  // version 2 (the demo is 1)
            let metrics = TestMetrics()
            let service = fixture.service(metrics: metrics)
            let provider = VaneConfigProvider(service: service)
            let config = ConfigReader(provider: provider)
            #expect(config.bool(forKey: "checkout.new-flow", default: true), "nothing downloaded yet: the default")

            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(services: [service], logger: Logger(label: "test.group"))
            )
            let running = Task { try await group.run() }
            #expect(await eventually(within: 10) { service.client.templateVersion == 2 })
            #expect(await eventually(within: 10) { service.client.streamState == .connected })

            // Key mapping and targeting: checkout.new-flow → checkout_new_flow, country from the context.
            #expect(config.bool(forKey: ConfigKey("checkout.new-flow", context: Self.germany), default: false))
            #expect(!config.bool(forKey: ConfigKey("checkout.new-flow", context: Self.france), default: true))
            #expect(config.string(forKey: ConfigKey("banner.text", context: Self.germany)) == "Willkommen!")
            #expect(config.string(forKey: ConfigKey("banner.text", context: Self.france)) == "Welcome!")
            #expect(config.int(forKey: "retry.limit") == 4)
            #expect(config.string(forKey: "not.in.vane") == nil)

            // A publish reaches a value watcher through the event stream, without a restart. The bound
            // tells the stream from the 60 s poll; the stream's latency itself is a benchmark figure
            // (docs/PERFORMANCE.md, "stream"), because a timed assertion fails on a loaded machine.
            let delivery = try await withDeadline(seconds: 30) {
                try await config.watchBool(forKey: ConfigKey("checkout.new-flow", context: Self.france), default: true)
                {
                    updates in
                    var published: Date?
                    for await value in updates {
                        guard let published else {
                            #expect(value == false, "the value before the publish")
                            try await fixture.publish(Self.template(newFlowDefault: true))
                            published = Date()
                            continue
                        }
                        #expect(value == true, "the watcher saw the publish (version 3)")
                        return Date().timeIntervalSince(published)
                    }
                    return TimeInterval.infinity
                }
            }
            #expect(delivery < Self.streamNotPoll, "a publish reaches the watcher through the stream, not the poll")
            #expect(service.client.templateVersion == 3)
            #expect(config.bool(forKey: ConfigKey("checkout.new-flow", context: Self.france), default: false))
            let snapshot = provider.snapshot()
            #expect(
                try snapshot.value(forKey: AbsoluteConfigKey(["checkout", "new-flow"]), type: .bool).value?.content
                    == .bool(true)
            )

            // And a snapshot watcher.
            let bannerKey = AbsoluteConfigKey(["banner", "text"])
            let snapshotDelivery = try await withDeadline(seconds: 30) {
                try await provider.watchSnapshot { updates in
                    var published: Date?
                    for await snapshot in updates {
                        let banner = try snapshot.value(forKey: bannerKey, type: .string).value?.content
                        guard let published else {
                            #expect(banner == .string("Welcome!"))
                            try await fixture.publish(Self.template(newFlowDefault: true, banner: "Hello again"))
                            published = Date()
                            continue
                        }
                        #expect(banner == .string("Hello again"))
                        return Date().timeIntervalSince(published)
                    }
                    return TimeInterval.infinity
                }
            }
            #expect(snapshotDelivery < Self.streamNotPoll, "a publish reaches the snapshot watcher through the stream")

            // Metrics: evaluations, the template's version and age, the stream's state.
            #expect(metrics.counterTotal(label: VaneService.MetricLabel.evaluations) >= 8)
            #expect(try metrics.expectGauge(VaneService.MetricLabel.streamConnected, Self.dimensions).lastValue == 1)
            #expect(
                await eventually(within: 10) {
                    (try? metrics.expectGauge(VaneService.MetricLabel.templateVersion, Self.dimensions).lastValue) == 4
                }
            )
            let age = try metrics.expectGauge(VaneService.MetricLabel.templateAge, Self.dimensions).lastValue
            #expect(age.map { $0 >= 0 && $0 < 60 } == true)

            // Graceful shutdown of the group stops the service: the task returns, the stream closes.
            await group.triggerGracefulShutdown()
            _ = try await withDeadline(seconds: Self.shutdownDeadline) { try await running.value }
            #expect(service.client.streamState == .stopped)
            #expect(try metrics.expectGauge(VaneService.MetricLabel.streamConnected, Self.dimensions).lastValue == 0)
        }
    }

    static let dimensions = [("project", "demo"), ("environment", "production")]

    /// How long a graceful shutdown may take. The service's transport (async-http-client) closes
    /// a download in flight when the group cancels it, so this is well under the downloads' 5 s
    /// timeout: a shutdown that waited for a download would miss it.
    static let shutdownDeadline: TimeInterval = 4

    @Test func aServiceStartsFromItsCacheWhileVaneIsDown() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-cache-\(UUID().uuidString).json"
        )
        defer { try? FileManager.default.removeItem(at: cache) }
        var serverKey = ""
        try await ServerFixture.with { fixture in
            try await fixture.publish(Self.template(newFlowDefault: true, banner: "Cached"))
            serverKey = fixture.serverKey
            let service = fixture.service(cacheFile: cache)
            #expect(service.client.startupTemplate == nil)
            let group = ServiceGroup(services: [service], logger: Logger(label: "test.group"))
            let running = Task { try await group.run() }
            #expect(await eventually(within: 10) { FileManager.default.fileExists(atPath: cache.path) })
            await group.triggerGracefulShutdown()
            _ = try await withDeadline(seconds: Self.shutdownDeadline) { try await running.value }
        }
        // The server is gone: nothing listens there any more.
        let metrics = TestMetrics()
        var client = LocalEvaluationClient.Configuration(
            serverURL: URL(string: "http://127.0.0.1:9")!,
            project: "demo",
            environment: "production",
            serverKey: serverKey,
            pollInterval: 0.2,
            timeout: 1,
            cacheFile: cache
        )
        client.reconnect = BackoffPolicy(initial: 0.2, maximum: 1, jitter: 0)
        let service = VaneService(configuration: .init(client: client, metricsFactory: metrics, ageReportInterval: 0.1))
        #expect(service.client.startupTemplate?.origin == .cacheFile)
        #expect(service.client.templateVersion == 2)
        #expect((service.client.templateAge ?? -1) >= 0)
        let config = ConfigReader(provider: VaneConfigProvider(service: service))
        #expect(config.string(forKey: ConfigKey("banner.text", context: Self.france)) == "Cached")
        #expect(config.bool(forKey: ConfigKey("checkout.new-flow", context: Self.france), default: false))

        // Running while Vane stays down keeps the cached values and reports the template's age.
        let group = ServiceGroup(services: [service], logger: Logger(label: "test.group"))
        let running = Task { try await group.run() }
        #expect(
            await eventually(within: 3) {
                (try? metrics.expectGauge(VaneService.MetricLabel.templateAge, Self.dimensions).values.count) ?? 0 >= 2
            }
        )
        #expect(config.string(forKey: ConfigKey("banner.text", context: Self.france)) == "Cached")
        #expect(try metrics.expectGauge(VaneService.MetricLabel.streamConnected, Self.dimensions).lastValue != 1)
        await group.triggerGracefulShutdown()
        _ = try await withDeadline(seconds: Self.shutdownDeadline) { try await running.value }

        // A template file shipped with the service is used when there is no newer cache.
        let shipped = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-shipped-\(UUID().uuidString).json"
        )
        defer { try? FileManager.default.removeItem(at: shipped) }
        try Data(
            #"{"parameters": {"banner_text": {"defaultValue": {"value": "Shipped"}}}, "version": {"versionNumber": "9"}}"#
                .utf8
        )
        .write(to: shipped)
        client.templateFile = shipped
        let fromFile = VaneService(configuration: .init(client: client, metricsFactory: TestMetrics()))
        #expect(fromFile.client.startupTemplate?.origin == .templateFile)
        #expect(
            ConfigReader(provider: VaneConfigProvider(service: fromFile)).string(forKey: "banner.text") == "Shipped"
        )
    }
}
