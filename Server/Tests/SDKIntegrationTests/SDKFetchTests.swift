import Foundation
import Testing
import Vane

/// Settings layout JSON as the demo project sends it.
struct DemoLayout: Codable, Sendable, Equatable {
    var sections: [String]
    var showBadges: Bool
}

enum DemoCheckout: String, CaseIterable, Sendable {
    case control
    case onePage = "one_page"
}

extension RemoteKeys {
    static let demoPayments = FeatureFlag("payments_enabled", default: false, title: "Payments (app)")
    static let demoBanner = RemoteKey("banner_text", default: "caller default")
    static let demoLayout = RemoteKey(json: "settings_layout", default: DemoLayout(sections: [], showBadges: false))
    static let demoCheckout = RemoteKey(experiment: "checkout_variant", default: DemoCheckout.control)
    static let undeclaredOnServer = RemoteKey("not_on_server", default: 7)
}

/// The SDK against a real `vane serve` on loopback, through a proxy that injects faults.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SDKFetchTests {
    @Test func fetchedValuesWaitForActivateThenReadTyped() async throws {
        try await SDKHarness.with { harness in
            let client = harness.client(defaults: InAppDefaults(["banner_text": "bundled"]))
            #expect(client[.demoBanner] == "bundled")
            #expect(client.value(forKey: "banner_text")?.source == .default)
            #expect(client[.demoPayments] == false)
            #expect(client.value(forKey: "payments_enabled") == nil)

            let result = try await client.fetch()
            #expect(result == .fetched(templateVersion: 1))
            // Nothing changes under the user until the app activates.
            #expect(client[.demoBanner] == "bundled")
            #expect(client.pendingTemplateVersion == 1)

            var updates = client.updates.makeAsyncIterator()
            #expect(client.activate())
            #expect(client[.demoBanner] == "Welcome to Vane!")
            #expect(client.value(forKey: "banner_text")?.source == .remote)
            #expect(client[.demoPayments] == true)
            #expect(client.bool(forKey: "payments_enabled", default: false))
            #expect(client[.demoLayout].sections == ["account", "notifications", "privacy", "labs"])
            #expect(client.decode(DemoLayout.self, forKey: "settings_layout")?.showBadges == true)
            #expect([DemoCheckout.control, .onePage].contains(client[.demoCheckout]))
            #expect(client[.undeclaredOnServer] == 7)
            #expect(client.activeTemplateVersion == 1)
            #expect(client.metadata(forKey: "payments_enabled")?.realtime == true)
            #expect(client.metadata(forKey: "payments_enabled")?.title == "Payments")
            let update = await updates.next()
            #expect(update?.reason == .activation)
            #expect(update?.changedKeys == ["banner_text", "payments_enabled", "settings_layout", "checkout_variant"])
            #expect(client.activate() == false)

            // The request carried the key and this instance's context.
            let request = try #require(harness.fetchRequests.first)
            #expect(request.headers["authorization"] == "Bearer \(harness.clientKey)")
            #expect(request.body.contains(#""randomizationId":"\#(client.installationId)""#))
            #expect(request.body.contains(#""app.version":"2.1.0""#))
        }
    }

    @Test func anUnchangedResultCostsA304AndTheIntervalSkipsTheNetwork() async throws {
        try await SDKHarness.with { harness in
            let client = harness.client(minimumFetchInterval: 3600)
            #expect(try await client.fetchAndActivate() == .fetched(templateVersion: 1))
            guard case .notDue(let next) = try await client.fetch() else {
                Issue.record("a fetch inside the interval went to the server")
                return
            }
            #expect(next > Date().addingTimeInterval(3500))
            #expect(harness.fetchRequests.count == 1)

            #expect(try await client.fetch(minimumInterval: 0) == .noChange)
            let second = try #require(harness.fetchRequests.last)
            #expect(second.headers["if-none-match"] != nil)
            #expect(second.status == 304)
            #expect(harness.fetchRequests.count == 2)

            // A publish that changes this context's values gives new values.
            try await harness.publish(#"{"parameters": {"banner_text": {"defaultValue": {"value": "v2"}}}}"#)
            #expect(try await client.fetch(minimumInterval: 0) == .fetched(templateVersion: 2))
            #expect(client[.demoBanner] == "Welcome to Vane!")
            client.activate()
            #expect(client[.demoBanner] == "v2")
            #expect(client[.demoPayments] == false, "a key the new template removed falls back to the caller's default")
        }
    }

    @Test func aPublishThatChangesNothingHereStillCostsA304() async throws {
        try await SDKHarness.with { harness in
            func template(german: String) -> String {
                """
                {"conditions": [{"name": "german", "expression": "device.country in ['de']"}],
                 "parameters": {"banner_text": {"defaultValue": {"value": "v1"},
                                                "conditionalValues": {"german": {"value": "\(german)"}}}}}
                """
            }
            try await harness.publish(template(german: "Hallo"))
            let client = harness.client()
            #expect(try await client.fetchAndActivate() == .fetched(templateVersion: 2))
            try await harness.publish(template(german: "Servus"))
            #expect(try await client.fetch(minimumInterval: 0) == .noChange)
            #expect(try await client.fetch(minimumInterval: 0) == .noChange)
            #expect(client[.demoBanner] == "v1")
            let requests = harness.fetchRequests
            #expect(requests.map(\.status) == [200, 304, 304])
            // The first 304 came with a fresh ETag (a new version); the client sent that one next.
            let sent = requests.map { $0.headers["if-none-match"] }
            #expect(sent[1] != nil && sent[2] != nil && sent[1] != sent[2])
        }
    }

    @Test func aContextChangeBypassesTheInterval() async throws {
        try await SDKHarness.with { harness in
            let client = harness.client(minimumFetchInterval: 3600)
            try await client.fetchAndActivate()
            #expect(client[.demoBanner] == "Welcome to Vane!")
            client.updateContext { $0.country = "de" }
            #expect(client[.demoBanner] == "Welcome to Vane!", "a context change alone changes nothing on screen")
            #expect(try await client.fetchAndActivate() == .fetched(templateVersion: 1))
            #expect(client[.demoBanner] == "Willkommen bei Vane!")
            #expect(harness.fetchRequests.count == 2)
            #expect(harness.fetchRequests.last?.body.contains(#""device.country":"de""#) == true)

            client.updateContext { $0.signals["plan"] = "pro" }
            #expect(try await client.fetch() == .noChange, "same values for the new context: a 304")
            #expect(harness.fetchRequests.count == 3)
            guard case .notDue = try await client.fetch() else {
                Issue.record("the confirmed context should be inside the interval again")
                return
            }
        }
    }

    @Test func serverDownKeepsValuesAndStartsNoBackoff() async throws {
        try await SDKHarness.with { harness in
            let client = harness.client()
            try await client.fetchAndActivate()
            let closedPort = try #require(URL(string: "http://127.0.0.1:9"))
            let offline = harness.client(serverURL: closedPort)
            #expect(offline[.demoBanner] == "Welcome to Vane!", "the cache from the same directory")
            for _ in 0..<2 {
                await #expect {
                    try await offline.fetch()
                } throws: { error in
                    guard case VaneError.transport(.cannotConnect) = error else { return false }
                    return true
                }
            }
            #expect(offline[.demoBanner] == "Welcome to Vane!")
            if case .transport = offline.lastFetchError {} else { Issue.record("lastFetchError not set") }
        }
    }

    @Test(arguments: [429, 500, 503])
    func serverErrorsBackOffAndHonourRetryAfter(status: Int) async throws {
        try await SDKHarness.with { harness in
            let client = harness.client()
            try await client.fetchAndActivate()
            harness.proxy.set(.respond(status: status, headers: ["Retry-After": "600"], body: "{}"))
            let before = Date()
            do {
                try await client.fetch()
                Issue.record("a \(status) was taken as success")
            } catch let error as VaneError {
                guard case .serverUnavailable(let answered, let retryAt) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(answered == status)
                #expect(retryAt >= before.addingTimeInterval(599), "Retry-After: 600 is honoured")
            }
            let sent = harness.fetchRequests.count
            harness.proxy.set(.forward)
            await #expect {
                try await client.fetch()
            } throws: { error in
                guard case VaneError.backingOff = error else { return false }
                return true
            }
            #expect(harness.fetchRequests.count == sent, "nothing is sent during a backoff")
            #expect(client[.demoBanner] == "Welcome to Vane!")
        }
    }

    @Test func withoutRetryAfterTheBackoffGrowsExponentially() async throws {
        try await SDKHarness.with { harness in
            let client = harness.client(backoff: BackoffPolicy(initial: 0.2, maximum: 600, jitter: 0))
            harness.proxy.set(.respond(status: 500, headers: [:], body: "oops"))
            // The n-th failure pauses initial × 2ⁿ⁻¹ from the moment the fetch began: the retry time
            // lies between (before + pause) and (after + pause), however slowly the machine runs.
            for expected in [0.2, 0.4, 0.8] {
                let before = Date()
                do {
                    try await client.fetch()
                    Issue.record("a 500 was taken as success")
                } catch let error as VaneError {
                    let after = Date()
                    guard case .serverUnavailable(500, let retryAt) = error else {
                        Issue.record("unexpected \(error)")
                        return
                    }
                    #expect(retryAt.timeIntervalSince(before) >= expected - 0.001, "pause \(expected)")
                    #expect(retryAt.timeIntervalSince(after) <= expected + 0.001, "pause \(expected)")
                    let wait = max(0, retryAt.timeIntervalSinceNow) + 0.05
                    try await Task.sleep(nanoseconds: UInt64(wait * 1e9))
                }
            }
            harness.proxy.set(.forward)
            #expect(try await client.fetch() == .fetched(templateVersion: 1), "success after the pause")
        }
    }

    @Test func slowTruncatedAndMalformedAnswersKeepTheActiveValues() async throws {
        try await SDKHarness.with { harness in
            // The good values arrive with the default timeout: on a loaded machine a forwarded
            // fetch can take longer than the one second the faults below are measured against.
            try await harness.client().fetchAndActivate()
            let client = harness.client(timeout: 1)
            #expect(client[.demoBanner] == "Welcome to Vane!", "the short-timeout client starts from the stored values")
            let faults: [(FaultProxy.Behaviour, String)] = [
                (.delay(seconds: 3), "slower than the timeout"),
                (.truncate(declaredLength: 500, body: #"{"state":"UPDATE","entries":{"banner_text":"tr"#), "truncated"),
                (.close, "closed without an answer"),
                (
                    .respond(status: 200, headers: [:], body: #"{"state":"UPDATE","entries":{"banner_text":"x""#),
                    "cut JSON"
                ),
                (.respond(status: 200, headers: [:], body: "<html>proxy error</html>"), "not JSON"),
                (
                    .respond(status: 200, headers: [:], body: #"{"state":"UPDATE","entries":{"banner_text":3}}"#),
                    "a number value"
                ),
                (.respond(status: 200, headers: [:], body: #"{"state":"LATER"}"#), "an unknown state"),
                (.respond(status: 200, headers: [:], body: "[1,2]"), "an array"),
            ]
            for (fault, name) in faults {
                harness.proxy.set(fault)
                do {
                    try await client.fetch()
                    Issue.record("\(name): accepted")
                } catch let error as VaneError {
                    switch error {
                    case .transport, .malformedResponse: break
                    default: Issue.record("\(name): unexpected \(error)")
                    }
                }
                #expect(client[.demoBanner] == "Welcome to Vane!", "\(name)")
                #expect(client.pendingTemplateVersion == nil, "\(name)")
            }
            // Nothing corrupt reached the disk: a new client starts from the good values.
            let relaunched = harness.client()
            #expect(relaunched[.demoBanner] == "Welcome to Vane!")
            harness.proxy.set(.forward)
            #expect(try await relaunched.fetch() == .noChange, "the kept ETag still matches")
        }
    }

    @Test func rejectedKeysSayWhatToFix() async throws {
        try await SDKHarness.with { harness in
            let client = VaneClient(
                configuration: VaneClient.Configuration(
                    serverURL: harness.proxy.url,
                    project: "demo",
                    environment: "production",
                    clientKey: "vane_client_wrong",
                    storage: .inMemory
                )
            )
            do {
                try await client.fetch()
                Issue.record("a wrong key was accepted")
            } catch let error as VaneError {
                guard case .rejected(401, let message) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(!message.isEmpty)
                #expect(error.description.contains("check the client key"))
            }
        }
    }

    @Test func concurrentFetchesShareOneRequest() async throws {
        try await SDKHarness.with { harness in
            let client = harness.client()
            harness.proxy.set(.delay(seconds: 2))
            let results = await withTaskGroup(of: VaneClient.FetchResult?.self) { group in
                for _ in 0..<5 { group.addTask { try? await client.fetch() } }
                var results: [VaneClient.FetchResult?] = []
                for await result in group { results.append(result) }
                return results
            }
            #expect(results.count == 5)
            #expect(results.allSatisfy { $0 == .fetched(templateVersion: 1) })
            #expect(harness.fetchRequests.count == 1)
        }
    }

    @Test func theCacheSurvivesARelaunchWithActiveAndPendingValuesApart() async throws {
        try await SDKHarness.with { harness in
            let first = harness.client()
            try await first.fetchAndActivate()
            try await harness.publish(#"{"parameters": {"banner_text": {"defaultValue": {"value": "next"}}}}"#)
            #expect(try await first.fetch() == .fetched(templateVersion: 2))
            first.setOverride("false", forKey: "payments_enabled")

            let second = harness.client()
            #expect(second.installationId == first.installationId)
            #expect(second[.demoBanner] == "Welcome to Vane!", "the active values, not the pending ones")
            #expect(second.pendingTemplateVersion == 2)
            #expect(second[.demoPayments] == false)
            #expect(second.value(forKey: "payments_enabled")?.source == .override)
            #expect(second.activate())
            #expect(second[.demoBanner] == "next")
            #expect(try await second.fetch() == .noChange, "the pending ETag came with the pending values")
            #expect(harness.fetchRequests.last?.status == 304)
        }
    }

    @Test func aCorruptCacheFileIsIgnoredAndReplaced() async throws {
        try await SDKHarness.with { harness in
            let directory = harness.directory.appendingPathComponent("app")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data("VNC1 not really a cache".utf8).write(to: directory.appendingPathComponent("config.vanecache"))
            try Data("[not an object]".utf8).write(to: directory.appendingPathComponent("overrides.json"))
            let client = harness.client(defaults: InAppDefaults(["banner_text": "bundled"]))
            #expect(client[.demoBanner] == "bundled")
            #expect(client.overrides.isEmpty)
            #expect(harness.fetchRequests.isEmpty)
            try await client.fetchAndActivate()
            #expect(harness.fetchRequests.first?.headers["if-none-match"] == nil, "no ETag without its cache")
            #expect(harness.client()[.demoBanner] == "Welcome to Vane!")

            // One flipped byte (a damaged disk, a bad restore): detected by the checksum, ignored.
            let cacheURL = directory.appendingPathComponent("config.vanecache")
            var bytes = [UInt8](try Data(contentsOf: cacheURL))
            bytes[bytes.count / 2] ^= 0x20
            try Data(bytes).write(to: cacheURL)
            let damaged = harness.client(defaults: InAppDefaults(["banner_text": "bundled"]))
            #expect(damaged[.demoBanner] == "bundled")
            #expect(damaged.activeTemplateVersion == nil)
        }
    }
}
