import Foundation

@testable import Vane

/// Clients of `shop/prod` over one ``ScriptedTransport`` and one ``ManualClock``, with their
/// files in a fresh temporary folder (a second client there is the app's next launch). Backoff and
/// reconnection have no jitter, so every pause is exact.
struct ScriptedSetup: Sendable {
    let transport = ScriptedTransport()
    let clock = ManualClock()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-scripted-\(UUID().uuidString)")

    func client(_ configure: (inout VaneClient.Configuration) -> Void = { _ in }) throws -> VaneClient {
        try DeviceStorageTests.client(.directory(directory), transport: transport) { configuration in
            configuration.clock = clock.sdkClock
            configuration.backoff = BackoffPolicy(initial: 30, maximum: 3600, jitter: 0)
            configuration.liveUpdates.reconnect = BackoffPolicy(initial: 1, maximum: 60, jitter: 0)
            configure(&configuration)
        }
    }

    func removeFiles() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits until `condition` holds (the bound in ``AppLifecycleTests/eventually(_:)`` only
    /// keeps a broken build from hanging): for work the client does in its own tasks.
    func eventually(_ condition: @Sendable () -> Bool) async {
        await AppLifecycleTests.eventually(condition)
    }

    /// The fetch requests' `If-None-Match` headers, in order.
    var sentETags: [String?] {
        transport.requests(to: .fetch).map { $0.headers["If-None-Match"] }
    }
}
