import Foundation
import TestSupport
import Testing
import VaneCore

/// Webhooks across a SIGKILL of the sender: `vane serve` is killed while an endpoint holds one of
/// its deliveries unanswered, and started again on the same data. Nothing is lost: every version
/// arrives, in version order, and the cut message is sent again with the same `webhook-id`.
@Suite(.serialized, .timeLimit(.minutes(6))) struct WebhookCrashTests {
    static let adminKey = "vane_admin_webhook-crash-test-key-0123456789"
    /// Versions published before the kill.
    static let versions = 8
    /// The request the endpoint leaves unanswered (the sender is killed while it waits).
    static let heldRequest = 4

    @Test(.timeLimit(.minutes(3)), arguments: CrashTests.Engine.allCases)
    func aSenderKilledMidDeliveryLosesNothing(engine: CrashTests.Engine) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-webhook-\(UUID().uuidString)"
        )
        // A short lease: on PostgreSQL the restarted node waits it out before sending the cut
        // delivery again (it cannot know the node that held it is dead).
        var arguments = [
            "--data-dir", directory.path, "--admin-key", Self.adminKey, "--no-demo",
            "--webhooks-allow-private-addresses", "--webhook-retry", "0.2", "--webhook-lease", "2",
        ]
        if engine == .postgres { arguments += ["--database", try await CrashTests.freshPostgresURL()] }
        let logs = directory.appendingPathComponent("logs")
        let receiver = try await WebhookReceiver.start(holdFrom: Self.heldRequest)
        var server = try await CrashServeProcess.start(arguments: arguments, outputDirectory: logs)
        defer { server.kill() }

        for (path, id) in [("/v1/projects", "hooks"), ("/v1/projects/hooks/environments", "prod")] {
            let reply = try await server.send("POST", path, key: Self.adminKey, json: ["id": .string(id)])
            try #require(reply.status == 201, "\(reply.text)")
        }
        let created = try await server.send(
            "POST",
            "/v1/projects/hooks/webhooks",
            key: Self.adminKey,
            json: ["url": .string("http://127.0.0.1:\(receiver.port)/hook"), "events": ["version.published"]]
        )
        try #require(created.status == 201, "\(created.text)")
        let endpoint = try #require(created.json?.objectValue?["id"]?.stringValue)

        for index in 1...Self.versions {
            let reply = try await server.send(
                "PUT",
                "/v1/projects/hooks/environments/prod/template",
                key: Self.adminKey,
                json: ["parameters": ["n": ["defaultValue": ["value": .string("\(index)")]]]],
                headers: ["If-Match": "*"]
            )
            try #require(reply.status == 200, "\(reply.text)")
        }
        let reachedHold = await eventually(within: 30) { receiver.received.count >= Self.heldRequest }
        try #require(reachedHold, "only \(receiver.received.count) requests arrived: \(server.log)")
        server.kill()
        let cut = receiver.received[Self.heldRequest - 1]
        receiver.stopHolding()

        server = try await CrashServeProcess.start(arguments: arguments, outputDirectory: logs)
        let complete = await eventually(within: 60) { Set(Self.versions(receiver.received)).count == Self.versions }
        #expect(complete, "received versions \(Self.versions(receiver.received)): \(server.log)")

        // In version order, first arrivals only (the cut one arrives twice).
        var firstArrivals: [Int] = []
        for version in Self.versions(receiver.received) where !firstArrivals.contains(version) {
            firstArrivals.append(version)
        }
        #expect(firstArrivals == Array(1...Self.versions))
        #expect(
            receiver.received.filter { $0.id == cut.id }.count >= 2,
            "the cut message \(cut.id) is sent again with the same webhook-id"
        )
        // One id per version: a message sent again is the same message.
        var idsByVersion: [Int: Set<String>] = [:]
        for received in receiver.received {
            if let version = Self.version(received) { idsByVersion[version, default: []].insert(received.id) }
        }
        #expect(idsByVersion.values.allSatisfy { $0.count == 1 }, "\(idsByVersion)")

        let delivered = await eventually(within: 20) {
            let page = try? await server.send(
                "GET",
                "/v1/projects/hooks/webhooks/\(endpoint)/deliveries",
                key: Self.adminKey
            )
            let statuses = page?.json?.objectValue?["deliveries"]?.arrayValue?.compactMap {
                $0.objectValue?["status"]?.stringValue
            }
            return statuses?.count == Self.versions && statuses?.allSatisfy { $0 == "delivered" } == true
        }
        #expect(delivered, "every delivery is recorded as delivered")
        server.terminate()
        await receiver.close()
        try? FileManager.default.removeItem(at: directory)
    }

    static func version(_ received: WebhookReceiver.Received) -> Int? {
        (try? JSONValue.parse(received.body))?.objectValue?["data"]?.objectValue?["version"]?.numberValue?.intValue
    }

    static func versions(_ received: [WebhookReceiver.Received]) -> [Int] {
        received.compactMap(version)
    }
}
