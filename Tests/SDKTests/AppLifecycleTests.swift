import Foundation
import Testing
import VaneCore

@testable import Vane

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an app's life on a device does to the client: going to the background, releasing its
/// SwiftUI models, a background URLSession, the files while offline (issue #34).
@Suite struct AppLifecycleTests {
    static func client(
        _ transport: any HTTPTransport,
        storage: StorageLocation = .inMemory,
        flushInterval: TimeInterval = 0
    ) throws -> VaneClient {
        try DeviceStorageTests.client(storage, transport: transport, flushInterval: flushInterval)
    }

    /// A transport whose event requests wait at `gate` until the test opens it, then are accepted.
    static func gated(_ gate: ScriptGate) -> ScriptedTransport {
        let transport = ScriptedTransport()
        transport.always(.events, .held(gate, .status(200, body: #"{"accepted":1}"#)))
        return transport
    }

    /// Waits until `condition` holds; the bound (60 s) only keeps a broken build from hanging,
    /// and is generous because CI runs the suites on two busy cores.
    static func eventually(_ condition: @Sendable () -> Bool) async {
        let deadline = Date().addingTimeInterval(60)
        while !condition(), Date() < deadline { try? await Task.sleep(nanoseconds: 5_000_000) }
    }

    @Test func flushingInTheBackgroundSendsTheQueueInsideTheActivity() async throws {
        let gate = ScriptGate()
        gate.open()
        let client = try Self.client(Self.gated(gate))
        client.track("checkout_completed", value: 1, properties: [:])
        let reasons = LockedValue<[String]>([])
        let activity = ExpiringActivity { reason, block in
            reasons.withLockedValue { $0.append(reason) }
            DispatchQueue.global().async { block(false) }
        }
        await client.flushInBackground(activity: activity).value
        #expect(client.queuedEventCount == 0, "sent before the activity ended")
        #expect(reasons.withLockedValue { $0 } == ["Vane: sending queued events"])
    }

    @Test func whenTheBackgroundTimeRunsOutTheActivityEndsAndTheEventsWait() async throws {
        let gate = ScriptGate()
        let client = try Self.client(Self.gated(gate))
        client.track("checkout_completed", value: 1, properties: [:])
        let activity = ExpiringActivity { _, block in
            DispatchQueue.global().async { block(false) }
            // The system's time is up while the request hangs.
            DispatchQueue.global().async {
                while gate.waitingCount == 0 { Thread.sleep(forTimeInterval: 0.005) }
                block(true)
            }
        }
        await client.flushInBackground(activity: activity).value
        #expect(client.queuedEventCount == 1, "the request did not finish: the event waits for the next flush")
        gate.open()
        await Self.eventually { client.queuedEventCount == 0 }
        #expect(client.queuedEventCount == 0)
    }

    @Test func whenTheSystemGrantsNoTimeTheEventsAreSentAllTheSame() async throws {
        let gate = ScriptGate()
        gate.open()
        let client = try Self.client(Self.gated(gate))
        client.track("checkout_completed", value: 1, properties: [:])
        let refusing = ExpiringActivity { _, block in DispatchQueue.global().async { block(true) } }
        await client.flushInBackground(activity: refusing).value
        await Self.eventually { client.queuedEventCount == 0 }
        #expect(client.queuedEventCount == 0)
    }

    @Test func aBackgroundSessionIsRefusedUpFront() throws {
        // FoundationNetworking has no background sessions: the decision is tested on its input.
        #expect(throws: URLSessionTransportError.backgroundSession(identifier: "com.example.shop.uploads")) {
            try URLSessionTransport.checkNotBackground(identifier: "com.example.shop.uploads")
        }
        try URLSessionTransport.checkNotBackground(identifier: URLSessionConfiguration.ephemeral.identifier)
        #expect(
            URLSessionTransportError.backgroundSession(identifier: "x").description.contains("default or ephemeral")
        )
        #if canImport(Darwin)
        let session = URLSession(configuration: .background(withIdentifier: "com.example.shop.uploads"))
        #expect(throws: URLSessionTransportError.backgroundSession(identifier: "com.example.shop.uploads")) {
            try URLSessionTransport(session: session)
        }
        #endif
        _ = try URLSessionTransport(session: URLSession(configuration: .ephemeral))
    }

    #if canImport(Observation)
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func releasedSwiftUIModelsStopWatchingTheClient() async throws {
        let client = try Self.client(ScriptedTransport(TransportResponse(status: 503, headers: [:], body: Data())))
        do {
            let menu = DebugMenuModel(client: client)
            let config = ObservableConfig(client: client)
            #expect(client.updateSubscriberCount == 2)
            withExtendedLifetime((menu, config)) {}
        }
        await Self.eventually { client.updateSubscriberCount == 0 }
        #expect(client.updateSubscriberCount == 0, "no subscription outlives its model")
    }
    #endif

    @Test func anOfflineClientWithNothingNewDoesNotRewriteTheQueue() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-offline-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        // A device without a network: every request fails at once.
        let transport = ScriptedTransport()
        transport.always(.events, .fail(.cannotConnect(reason: "the device is offline")))
        let client = try Self.client(transport, storage: .directory(directory), flushInterval: 0.02)
        client.track("checkout_completed", value: 1, properties: [:])
        let file = directory.appendingPathComponent("events.json")
        // Each atomic write makes a new file: its file number tells a rewrite.
        @Sendable func fileNumber() -> String? {
            (try? FileManager.default.attributesOfItem(atPath: file.path))?[.systemFileNumber].map { "\($0)" }
        }
        await Self.eventually { transport.requests.count >= 2 && fileNumber() != nil }
        let written = fileNumber()
        let attemptsBefore = transport.requests.count
        await Self.eventually { transport.requests.count >= attemptsBefore + 5 }
        #expect(transport.requests.count >= attemptsBefore + 5, "the client keeps trying")
        #expect(written != nil && fileNumber() == written, "nothing new was recorded: the file was not written again")
    }

    @Test func theSDKShipsAPrivacyManifestWithWhatItCollectsAndTheAPIsItUses() throws {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
        let manifest = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any]
        )
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        let collected = (manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]] ?? []).compactMap {
            $0["NSPrivacyCollectedDataType"] as? String
        }
        #expect(collected == ["NSPrivacyCollectedDataTypeDeviceID", "NSPrivacyCollectedDataTypeProductInteraction"])
        let apis = (manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]] ?? []).compactMap {
            $0["NSPrivacyAccessedAPIType"] as? String
        }
        #expect(apis == ["NSPrivacyAccessedAPICategoryFileTimestamp", "NSPrivacyAccessedAPICategoryUserDefaults"])
    }
}
