import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing
import Vane
import VaneCore

/// The SDK's side of experiments (issue #15) against a real `vane serve`: exposures recorded on
/// the first read after an activation and only then, tracked events, the queue on disk, its
/// bound, retries that count once, and backoff.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SDKExperimentTests {
    /// The demo's checkout test: `checkout_test_b` (half of the units) is variant new-flow.
    static let definition = #"""
        {"key": "checkout-button", "parameters": ["checkout_variant"],
         "variants": [{"name": "control", "weight": 50},
                      {"name": "new-flow", "condition": "checkout_test_b", "weight": 50}],
         "primaryMetric": {"event": "checkout_completed", "kind": "conversion"}}
        """#

    static func startExperiment(_ server: ServeProcess) async throws {
        let file = try CLIRunner.temporaryFile(definition, name: "experiment.json")
        let created = try await server.run(["experiments", "create", file])
        #expect(created.status == 0, "\(created.stderr)")
        let started = try await server.run(["experiments", "start", "checkout-button"])
        #expect(started.status == 0, "\(started.stderr)")
    }

    /// The experiment's raw events as the server stored them (`vane experiments export`).
    static func exported(_ server: ServeProcess) async throws -> [JSONObject] {
        let output = try await server.run(["experiments", "export", "checkout-button"])
        #expect(output.status == 0, "\(output.stderr)")
        return try output.stdout.split(separator: "\n").map { line in
            try #require(try JSONValue.parse(Array(line.utf8)).objectValue)
        }
    }

    /// Exposed units per variant, from `vane experiments results --json`.
    static func exposedUnits(_ server: ServeProcess) async throws -> [String: Int] {
        let output = try await server.run(["experiments", "results", "checkout-button", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        let results = try #require(try JSONValue.parse(Array(output.stdout.utf8)).objectValue)
        var counts: [String: Int] = [:]
        for variant in results["variants"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            if let name = variant["name"]?.stringValue { counts[name] = variant["exposedUnits"]?.numberValue?.intValue }
        }
        return counts
    }

    @Test func theFirstReadAfterAnActivationRecordsOneExposureAndTrackedEventsFollow() async throws {
        try await SDKHarness.with { harness in
            try await Self.startExperiment(harness.server)
            let forwarded = NIOLockedValueBox<[Exposure]>([])
            let client = harness.client(
                context: ClientContext(userId: "user-7"),
                events: EventOptions(flushInterval: 0) { exposure in forwarded.withLockedValue { $0.append(exposure) } }
            )
            try await client.fetchAndActivate()
            #expect(client.queuedEventCount == 0, "nothing is recorded before the app reads the key")
            let value = client.string(forKey: "checkout_variant", default: "?")
            _ = client.string(forKey: "checkout_variant", default: "?")
            _ = client.snapshot().string(forKey: "checkout_variant", default: "?")
            #expect(client.queuedEventCount == 1, "one exposure, however often the key is read")
            let exposure = try #require(forwarded.withLockedValue { $0.first })
            #expect(forwarded.withLockedValue { $0.count } == 1)
            let variant = value == "one_page" ? "new-flow" : "control"
            #expect(exposure.variant == variant)
            #expect(exposure.unit == "user-7")
            #expect(
                exposure.attributes["feature_flag.key"] == "checkout_variant"
                    && exposure.attributes["feature_flag.result.variant"] == variant
                    && exposure.attributes["feature_flag.context.id"] == "user-7"
                    && exposure.attributes["feature_flag.version"] == "1"
            )
            _ = client.string(forKey: "banner_text", default: "?")
            #expect(client.queuedEventCount == 1, "a key in no experiment records nothing")

            client.track("checkout_completed", value: 39.90, properties: ["currency": "EUR"])
            client.track("not a valid name")
            #expect(client.queuedEventCount == 2, "an event the server would refuse is not queued")
            try await client.flush()
            #expect(client.queuedEventCount == 0)
            #expect(
                try await Self.exposedUnits(harness.server) == [
                    "control": variant == "control" ? 1 : 0, "new-flow": variant == "new-flow" ? 1 : 0,
                ]
            )
            let events = try await Self.exported(harness.server)
            #expect(events.count == 2, "\(events)")
            let exposed = events.first { $0["type"] == "exposure" }
            #expect(exposed?["flagKey"] == "checkout_variant" && exposed?["variant"]?.stringValue == variant)
            let checkout = events.first { $0["type"] == "metric" }
            #expect(checkout?["name"] == "checkout_completed" && checkout?["unit"] == "user-7")
            #expect(checkout?["properties"]?.objectValue?["currency"] == "EUR")

            // Activating the same version again and reading again records nothing more; a local
            // override means the user does not see the variant: nothing either.
            _ = try await client.fetchAndActivate()
            _ = client.string(forKey: "checkout_variant", default: "?")
            #expect(client.queuedEventCount == 0)
            let overridden = harness.client(storage: "overridden", context: ClientContext(userId: "user-8"))
            overridden.setOverride("one_page", forKey: "checkout_variant")
            try await overridden.fetchAndActivate()
            _ = overridden.string(forKey: "checkout_variant", default: "?")
            #expect(overridden.queuedEventCount == 0, "an overridden key is no exposure")
        }
    }

    @Test func aRetryAfterALostAnswerCountsOnceAndServerErrorsBackOff() async throws {
        try await SDKHarness.with { harness in
            try await Self.startExperiment(harness.server)
            // Three seconds, not one: a loaded machine can take a second to answer a forwarded request.
            let client = harness.client(context: ClientContext(userId: "user-1"), timeout: 3)
            try await client.fetchAndActivate()
            _ = client.string(forKey: "checkout_variant", default: "?")
            for _ in 0..<3 { client.track("checkout_completed") }

            // The server stores the batch, but the answer comes too late: the events stay queued
            // and the next flush sends the same ids again.
            harness.proxy.set(.delay(seconds: 5))
            await #expect(throws: VaneError.self) { try await client.flush() }
            #expect(client.queuedEventCount == 4, "unanswered events wait")
            #expect(await eventually(within: 10) { (try? await Self.exported(harness.server).count) == 4 })
            harness.proxy.set(.forward)
            try await client.flush()
            #expect(client.queuedEventCount == 0)
            let events = try await Self.exported(harness.server)
            #expect(events.count == 4, "one exposure and three events, each once: \(events.count)")

            // A 503 with Retry-After pauses sending; the events wait.
            client.track("checkout_completed")
            harness.proxy.set(.respond(status: 503, headers: ["Retry-After": "120"], body: "{}"))
            await #expect(throws: VaneError.self) { try await client.flush() }
            harness.proxy.set(.forward)
            do {
                try await client.flush()
                Issue.record("a flush during the backoff must not send")
            } catch {
                guard case VaneError.backingOff(let retryAt) = error else {
                    Issue.record("expected backingOff, got \(error)")
                    return
                }
                #expect(retryAt.timeIntervalSinceNow > 100, "Retry-After: 120 is honoured")
            }
            #expect(client.queuedEventCount == 1)
        }
    }

    @Test func theQueueSurvivesARelaunchAndDropsItsOldestWhenFull() async throws {
        try await SDKHarness.with { harness in
            try await Self.startExperiment(harness.server)
            // user-3 sees the experiment first: an export holds the events of units it exposed.
            let exposed = harness.client(storage: "exposed", context: ClientContext(userId: "user-3"))
            try await exposed.fetchAndActivate()
            _ = exposed.string(forKey: "checkout_variant", default: "?")
            try await exposed.flush()
            harness.proxy.set(.close)  // offline: nothing arrives
            let options = EventOptions(maximumQueuedEvents: 5, flushInterval: 0)
            let first = harness.client(context: ClientContext(userId: "user-3"), events: options)
            for index in 0..<8 { first.track("checkout_completed", value: Double(index)) }
            await #expect(throws: VaneError.self) { try await first.flush() }
            #expect(first.queuedEventCount == 5)
            #expect(first.droppedEventCount == 3, "the three oldest were dropped and counted")

            // The app ends; the next launch finds the queue on disk and sends it.
            harness.proxy.set(.forward)
            let relaunched = harness.client(context: ClientContext(userId: "user-3"), events: options)
            #expect(relaunched.queuedEventCount == 5)
            #expect(relaunched.droppedEventCount == 3)
            try await relaunched.flush()
            #expect(relaunched.queuedEventCount == 0)
            let values = try await Self.exported(harness.server).compactMap { $0["value"]?.numberValue?.value }
            #expect(values == [3, 4, 5, 6, 7], "the five newest, in order, each once")
            let third = harness.client(context: ClientContext(userId: "user-3"), events: options)
            #expect(third.queuedEventCount == 0, "sent events are gone from the file")
        }
    }

    /// Runs the example app (`Examples/FlagsApp`) against `server` to its end, with its files in
    /// `storage`: a real process, launched again for each run like an app a user opens.
    static func launchApp(server: String, key: String, storage: URL, _ arguments: [String]) async throws -> String {
        let app = CLIRunner.executable.deletingLastPathComponent().appendingPathComponent("vane-example-app")
        let output = storage.deletingLastPathComponent().appendingPathComponent("app-\(UUID().uuidString).log")
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let status = try await offCooperativePool { () throws -> Int32 in
            let process = try SpawnedProcess(
                executable: app,
                arguments: arguments,
                environment: ["VANE_SERVER": server, "VANE_CLIENT_KEY": key, "VANE_EXAMPLE_STORAGE": storage.path],
                output: output
            )
            process.waitUntilExit()
            return process.terminationStatus
        }
        let text = try String(contentsOf: output, encoding: .utf8)
        #expect(status == 0, "the app failed: \(text)")
        return text
    }

    @Test func anAppExposesAndTracksAcrossRelaunchesWithTheServerDownInBetween() async throws {
        try await SDKHarness.with { harness in
            try await Self.startExperiment(harness.server)
            let storage = harness.directory.appendingPathComponent("relaunched-app")
            let key = harness.clientKey
            let user = ["--user", "buyer-1"]

            // Launch 1, online: fetch, activate, read the experiment's key, two checkouts; all sent.
            let first = try await Self.launchApp(
                server: harness.server.url,
                key: key,
                storage: storage,
                user + ["--track", "checkout_completed=20", "--track", "checkout_completed=5"]
            )
            #expect(first.contains("Events waiting: 0 (dropped: 0)"), "\(first)")

            // The server goes down. Launches 2 and 3 start from the cache, read the key again (the
            // same exposure: not recorded twice) and track; their events wait on disk.
            let down = harness.server.url
            #expect(harness.server.stop() == 0)
            let second = try await Self.launchApp(
                server: down,
                key: key,
                storage: storage,
                user + ["--track", "checkout_completed=7"]
            )
            #expect(second.contains("Fetch failed") && second.contains("Events waiting: 1 (dropped: 0)"), "\(second)")
            let third = try await Self.launchApp(
                server: down,
                key: key,
                storage: storage,
                user + ["--track", "checkout_completed=8"]
            )
            #expect(third.contains("Events waiting: 2 (dropped: 0)"), "\(third)")

            // The server comes back on the same database; launch 4 sends what waited.
            let server = try await harness.server.restarted()
            defer { server.stop() }
            let fourth = try await Self.launchApp(server: server.url, key: key, storage: storage, user)
            #expect(fourth.contains("Events waiting: 0 (dropped: 0)"), "\(fourth)")
            _ = try await Self.launchApp(server: server.url, key: key, storage: storage, user)

            // Nothing lost, nothing twice: one exposure, four checkouts.
            let events = try await Self.exported(server)
            #expect(events.filter { $0["type"] == "exposure" }.count == 1, "\(events)")
            let values = events.filter { $0["type"] == "metric" }.compactMap { $0["value"]?.numberValue?.value }
            #expect(values.sorted() == [5, 7, 8, 20], "\(events)")
            #expect(try await Self.exposedUnits(server).values.reduce(0, +) == 1)
        }
    }
}
