import Foundation
import Testing
import VaneCore

@testable import Vane

/// The event queue's file and bound (issue #15): what a relaunch finds, whatever the app did
/// before, and what it makes of a damaged file.
@Suite struct EventQueueTests {
    static func client(directory: URL, capacity: Int, status: Int = 503) throws -> VaneClient {
        VaneClient(
            configuration: VaneClient.Configuration(
                serverURL: try #require(URL(string: "http://127.0.0.1:9")),
                project: "app",
                environment: "prod",
                clientKey: "vane_client_secret",
                storage: .directory(directory),
                events: EventOptions(maximumQueuedEvents: capacity, batchSize: 1_000, flushInterval: 0),
                transport: ScriptedTransport(TransportResponse(status: status, headers: [:], body: Data("{}".utf8)))
            )
        )
    }

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("vane-queue-\(UUID().uuidString)")
    }

    @Test func aFullQueueKeepsTheNewestEventsInOrderAcrossARelaunch() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try Self.client(directory: directory, capacity: 1_000)
        // Enough drops to compact the queue's storage several times.
        for index in 0..<5_000 { client.track("step", value: Double(index), properties: [:]) }
        #expect(client.queuedEventCount == 1_000)
        #expect(client.droppedEventCount == 4_000)
        await #expect(throws: VaneError.self) { try await client.flush() }  // 503: written, not sent

        let relaunched = try Self.client(directory: directory, capacity: 1_000)
        #expect(relaunched.queuedEventCount == 1_000)
        #expect(relaunched.droppedEventCount == 4_000)
        let file = try #require(
            try JSONValue.parse(Array(Data(contentsOf: directory.appendingPathComponent("events.json")))).objectValue
        )
        let values = (file["events"]?.arrayValue ?? []).compactMap { $0.objectValue?["value"]?.numberValue?.value }
        #expect(values == (4_000..<5_000).map(Double.init), "the newest thousand, oldest first")
        let ids = (file["events"]?.arrayValue ?? []).compactMap { $0.objectValue?["id"]?.stringValue }
        #expect(Set(ids).count == 1_000, "every event has its own id")
    }

    @Test func aDamagedQueueFileIsIgnoredAndReplaced() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("events.json")
        try Data(#"{"format": 1, "events": [{"id": "#.utf8).write(to: file)
        let client = try Self.client(directory: directory, capacity: 10)
        #expect(client.queuedEventCount == 0, "a damaged file is not a crash, and not half a queue")
        client.track("checkout_completed", value: 1, properties: [:])
        await #expect(throws: VaneError.self) { try await client.flush() }
        #expect(try Self.client(directory: directory, capacity: 10).queuedEventCount == 1)
    }

    @Test func eventsTheServerWouldRefuseAreNotQueued() throws {
        let client = try Self.client(directory: Self.directory(), capacity: 10)
        client.track("", value: nil, properties: [:])
        client.track("has space", value: nil, properties: [:])
        client.track(String(repeating: "a", count: 101), value: nil, properties: [:])
        client.track("ok", value: .infinity, properties: [:])
        client.track("ok", value: nil, properties: Dictionary(uniqueKeysWithValues: (0..<21).map { ("p\($0)", "v") }))
        client.track("ok", value: nil, properties: ["long": String(repeating: "x", count: 257)])
        #expect(client.queuedEventCount == 0)
        client.track("checkout/completed:v2", value: -3.5, properties: ["currency": "EUR"])
        #expect(client.queuedEventCount == 1)
    }
}
