import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing
import Vane

/// Checks `condition` every 20 ms until it holds or `timeout` seconds pass; returns whether it held.
func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    return condition()
}

/// Collects what an `AsyncStream` delivers, so a test can wait for it with a deadline.
final class Recorder<Element: Sendable>: Sendable {
    private let values = NIOLockedValueBox<[Element]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let values = self.values
        task = Task {
            for await value in stream { values.withLockedValue { $0.append(value) } }
        }
    }

    var all: [Element] { values.withLockedValue { $0 } }

    /// Waits until the recorded values satisfy `condition`, up to `timeout` seconds; returns whether they did.
    func wait(timeout: TimeInterval = 15, until condition: ([Element]) -> Bool) async -> Bool {
        await waitUntil(timeout: timeout) { condition(all) }
    }

    deinit { task.cancel() }
}

/// Live updates against real `vane serve` processes: the SDK's event-stream client, partial
/// apply, reconnects and pauses.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LiveUpdateTests {
    /// `kill_switch` is marked real-time on the server; `banner` and `layout` are not.
    static func template(killSwitch: Bool, banner: String, layout: String = "grid") -> String {
        #"""
        {"parameters": {
          "kill_switch": {"defaultValue": {"value": "\#(killSwitch)"}, "valueType": "BOOLEAN", "vane": {"realtime": true}},
          "banner": {"defaultValue": {"value": "\#(banner)"}},
          "layout": {"defaultValue": {"value": "\#(layout)"}}
        }}
        """#
    }

    static let fastReconnect = BackoffPolicy(initial: 0.2, maximum: 1, jitter: 0)

    func liveClient(
        _ harness: SDKHarness,
        storage: String = "app",
        policy: LiveApplyPolicy = .allowlisted([]),
        keys: [KeyDescriptor] = [],
        serverURL: URL? = nil,
        idleTimeout: TimeInterval = 45
    ) throws -> VaneClient {
        let client = harness.client(storage: storage, keys: keys, serverURL: try serverURL ?? directURL(harness.server))
        var configuration = client.configuration
        configuration.liveUpdates = LiveUpdateOptions(
            policy: policy,
            reconnect: Self.fastReconnect,
            idleTimeout: idleTimeout
        )
        return VaneClient(configuration: configuration)
    }

    func directURL(_ server: ServeProcess) throws -> URL {
        try #require(URL(string: server.url))
    }

    func waitForState(
        _ client: VaneClient,
        timeout: TimeInterval = 15,
        _ matches: (LiveUpdateState) -> Bool
    ) async -> Bool {
        await waitUntil(timeout: timeout) { matches(client.liveUpdateState) }
    }

    @Test func aPublishIsFetchedAndOnlyRealtimeKeysChangeUnderTheUser() async throws {
        try await SDKHarness.with { harness in
            try await harness.publish(Self.template(killSwitch: false, banner: "a"))
            let client = try liveClient(harness)
            try await client.fetchAndActivate()
            let liveUpdates = Recorder(client.liveUpdates)
            let changes = Recorder(client.updates)
            client.startLiveUpdates()
            defer { client.stopLiveUpdates() }
            #expect(await waitForState(client) { $0 == .connected }, "\(client.liveUpdateState)")

            try await harness.publish(Self.template(killSwitch: true, banner: "b"))
            #expect(await liveUpdates.wait { !$0.isEmpty }, "no live update arrived")
            let update = try #require(liveUpdates.all.first)
            #expect(update.updatedKeys == ["kill_switch", "banner"])
            #expect(update.appliedKeys == ["kill_switch"])
            #expect(update.pendingKeys == ["banner"])
            #expect(client.bool(forKey: "kill_switch", default: false) == true, "the kill switch applies at once")
            #expect(client.string(forKey: "banner", default: "") == "a", "other keys wait for activate()")
            #expect(changes.all.contains { $0.reason == .liveUpdate && $0.changedKeys == ["kill_switch"] })

            #expect(client.activate())
            #expect(client.string(forKey: "banner", default: "") == "b")
            #expect(client.activeTemplateVersion == update.templateVersion)
        }
    }

    @Test func policiesAllNoneAndAnAppAllowlist() async throws {
        try await SDKHarness.with { harness in
            try await harness.publish(Self.template(killSwitch: false, banner: "a", layout: "grid"))
            let all = try liveClient(harness, storage: "all", policy: .all)
            let none = try liveClient(harness, storage: "none", policy: .none)
            let declared = KeyDescriptor(
                name: "layout",
                kind: .string,
                typeName: "String",
                defaultValue: "",
                realtime: true
            )
            let listed = try liveClient(harness, storage: "listed", policy: .allowlisted(["banner"]), keys: [declared])
            let clients = [all, none, listed]
            let recorders = clients.map { Recorder($0.liveUpdates) }
            for client in clients {
                try await client.fetchAndActivate()
                client.startLiveUpdates()
            }
            defer { for client in clients { client.stopLiveUpdates() } }
            for client in clients { #expect(await waitForState(client) { $0 == .connected }) }

            try await harness.publish(Self.template(killSwitch: true, banner: "b", layout: "list"))
            for recorder in recorders { #expect(await recorder.wait { !$0.isEmpty }) }

            #expect(recorders[0].all.first?.appliedKeys == ["kill_switch", "banner", "layout"])
            #expect(all.string(forKey: "banner", default: "") == "b")
            #expect(all.pendingTemplateVersion == nil, "everything applied is a whole activation")
            #expect(all.activeTemplateVersion == recorders[0].all.first?.templateVersion)

            #expect(recorders[1].all.first?.appliedKeys == [])
            #expect(recorders[1].all.first?.pendingKeys == ["kill_switch", "banner", "layout"])
            #expect(
                none.bool(forKey: "kill_switch", default: true) == false,
                "policy none applies not even real-time keys"
            )
            #expect(none.pendingTemplateVersion == recorders[1].all.first?.templateVersion)

            #expect(recorders[2].all.first?.appliedKeys == ["kill_switch", "banner", "layout"])
            #expect(listed.string(forKey: "layout", default: "") == "list", "declared realtime: true")
            #expect(listed.string(forKey: "banner", default: "") == "b", "in the app's allowlist")
        }
    }

    @Test func pausedClientsCatchUpOnResume() async throws {
        try await SDKHarness.with { harness in
            try await harness.publish(Self.template(killSwitch: false, banner: "a"))
            let client = try liveClient(harness)
            try await client.fetchAndActivate()
            let liveUpdates = Recorder(client.liveUpdates)
            client.pauseLiveUpdates()
            #expect(client.liveUpdateState == .stopped, "pausing what never started does nothing")
            client.startLiveUpdates()
            defer { client.stopLiveUpdates() }
            #expect(await waitForState(client) { $0 == .connected })
            client.pauseLiveUpdates()
            #expect(client.liveUpdateState == .paused)

            try await harness.publish(Self.template(killSwitch: true, banner: "a"))
            // While paused there is no connection: the server has nobody to tell.
            try await Task.sleep(nanoseconds: 500_000_000)
            #expect(liveUpdates.all.isEmpty)
            #expect(client.bool(forKey: "kill_switch", default: false) == false)

            client.resumeLiveUpdates()
            #expect(await liveUpdates.wait { !$0.isEmpty }, "the version published while paused arrives on resume")
            #expect(client.bool(forKey: "kill_switch", default: false) == true)
            #expect(client.liveUpdateState == .connected)
        }
    }

    @Test func reconnectsAfterTheServerRestartsAndMissesNothing() async throws {
        let server = try await ServeProcess.start(arguments: ["--stream-heartbeat", "60"])
        let key = try #require(server.demoClientKey)
        let port = try #require(server.url.split(separator: ":").last.map(String.init))
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("vane-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: storage) }
        let client = VaneClient(
            configuration: VaneClient.Configuration(
                serverURL: try directURL(server),
                project: "demo",
                environment: "production",
                clientKey: key,
                context: ClientContext(appVersion: "2.1.0", country: "us"),
                storage: .directory(storage),
                minimumFetchInterval: 0,
                liveUpdates: LiveUpdateOptions(reconnect: Self.fastReconnect)
            )
        )
        let file = try CLIRunner.temporaryFile(Self.template(killSwitch: false, banner: "a"))
        #expect(try await server.run(["publish", file, "--force"]).status == 0)
        try await client.fetchAndActivate()
        let first = try #require(client.activeTemplateVersion)
        let liveUpdates = Recorder(client.liveUpdates)
        let states = Recorder(client.liveUpdateStates)
        client.startLiveUpdates()
        defer { client.stopLiveUpdates() }
        #expect(await waitForState(client) { $0 == .connected })

        #expect(server.stop() == 0)
        #expect(await waitForState(client) { if case .waitingToReconnect = $0 { true } else { false } })
        // Let a few attempts fail against the closed port: the client must keep trying.
        #expect(await states.wait { $0.contains(.connecting(attempt: 2)) }, "\(states.all)")

        // The same data on the same port, and a publish straight away, most likely before the
        // client is back: the version comparison on reconnect must bring it.
        let restarted = try await ServeProcess.launch(
            arguments: [
                "--data-dir", server.dataDirectory.appendingPathComponent("data").path, "--admin-key",
                server.adminKey, "--port", port, "--stream-heartbeat", "60",
            ],
            standardOutput: server.dataDirectory.appendingPathComponent("stdout2.log"),
            standardError: server.dataDirectory.appendingPathComponent("stderr2.log"),
            timeout: 60
        )
        defer {
            restarted.process.terminate()
            restarted.process.waitUntilExit()
        }
        #expect(restarted.url == server.url)
        let next = try CLIRunner.temporaryFile(Self.template(killSwitch: true, banner: "a"))
        let environment = ["VANE_SERVER": restarted.url, "VANE_KEY": server.adminKey]
        #expect(try await CLIRunner.run(["publish", next, "--force"], environment: environment).status == 0)
        #expect(await liveUpdates.wait { $0.contains { $0.templateVersion == first + 1 } }, "\(client.liveUpdateState)")
        #expect(client.bool(forKey: "kill_switch", default: false) == true)
        #expect(await waitForState(client) { $0 == .connected })

        // And once connected, a publish arrives as an event.
        let third = try CLIRunner.temporaryFile(Self.template(killSwitch: false, banner: "a"))
        #expect(try await CLIRunner.run(["publish", third, "--force"], environment: environment).status == 0)
        #expect(await liveUpdates.wait { $0.contains { $0.templateVersion == first + 2 } })
        #expect(client.bool(forKey: "kill_switch", default: true) == false)
    }

    @Test func aStreamThatFallsSilentIsReopened() async throws {
        try await SDKHarness.with { harness in
            harness.proxy.set(.fallSilent(body: "retry: 100\n\n"))
            let client = try liveClient(harness, serverURL: harness.proxy.url, idleTimeout: 0.5)
            let states = Recorder(client.liveUpdateStates)
            client.startLiveUpdates()
            defer { client.stopLiveUpdates() }
            let reopened = await states.wait { states in
                states.filter { $0 == .connected }.count >= 2
            }
            #expect(reopened, "\(states.all)")
            let reasons = states.all.compactMap { state -> String? in
                if case .waitingToReconnect(_, _, let reason) = state { reason } else { nil }
            }
            #expect(reasons.first == "the stream was silent for 0.5 s", "\(reasons)")
            #expect(harness.proxy.received.filter { $0.path.hasSuffix("/stream") }.count >= 2)
        }
    }

    @Test func aRefusedKeyKeepsRetryingAndSaysWhy() async throws {
        try await SDKHarness.with { harness in
            let base = try liveClient(harness)
            var configuration = base.configuration
            configuration.clientKey = "vane_client_wrong"
            let client = VaneClient(configuration: configuration)
            client.startLiveUpdates()
            let states = Recorder(client.liveUpdateStates)
            #expect(
                await states.wait { states in
                    states.contains {
                        if case .waitingToReconnect(let attempt, _, let reason) = $0 {
                            attempt >= 2 && reason.contains("401")
                        } else {
                            false
                        }
                    }
                },
                "\(states.all)"
            )
            client.stopLiveUpdates()
            #expect(client.liveUpdateState == .stopped)
        }
    }

    @Test func aLiveFetchWaitsOutTheServersBackoff() async throws {
        try await SDKHarness.with { harness in
            try await harness.publish(Self.template(killSwitch: false, banner: "a"))
            let transport = FirstFetchUnavailable()
            let base = try liveClient(harness)
            var configuration = base.configuration
            configuration.transport = transport
            configuration.backoff = BackoffPolicy(initial: 1, maximum: 1, jitter: 0)
            let client = VaneClient(configuration: configuration)
            let liveUpdates = Recorder(client.liveUpdates)
            client.startLiveUpdates()
            defer { client.stopLiveUpdates() }
            #expect(await waitForState(client) { $0 == .connected })

            try await harness.publish(Self.template(killSwitch: true, banner: "a"))
            #expect(await liveUpdates.wait { !$0.isEmpty }, "the version arrives after the backoff")
            #expect(client.bool(forKey: "kill_switch", default: false) == true)
            let fetches = transport.fetchTimes
            #expect(fetches.count == 2, "one refused fetch, one after the pause: \(fetches)")
            if fetches.count == 2 {
                #expect(fetches[1].timeIntervalSince(fetches[0]) >= 2, "Retry-After: 2 is honoured")
            }
        }
    }
}

/// The real transport, except that the first fetch is answered 503 with `Retry-After: 2`.
final class FirstFetchUnavailable: HTTPTransport {
    private let real = URLSessionTransport()
    private let fetches = NIOLockedValueBox<[Date]>([])

    var fetchTimes: [Date] { fetches.withLockedValue { $0 } }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let isFirst = fetches.withLockedValue { fetches in
            fetches.append(Date())
            return fetches.count == 1
        }
        if isFirst { return TransportResponse(status: 503, headers: ["Retry-After": "2"]) }
        return try await real.send(request)
    }

    func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        try await real.openStream(request)
    }
}
