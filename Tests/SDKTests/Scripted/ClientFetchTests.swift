import Foundation
import Testing
import VaneCore

@testable import Vane

/// Fetch and activate over a scripted transport (issue #28): values never change until
/// `activate()`, ETags and 304s, the minimum interval on a manual clock, and answers that keep the
/// active values.
@Suite struct ClientFetchTests {
    @Test func fetchedValuesWaitForActivateAndTheRequestSaysWhoIsAsking() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .update(version: 1, ["banner": "Welcome!", "retries": "3"], etag: "\"e1\""))
        let client = try setup.client { $0.defaults = InAppDefaults(["banner": "bundled"]) }
        var updates = client.updates.makeAsyncIterator()

        #expect(try await client.fetch() == .fetched(templateVersion: 1))
        #expect(client.string(forKey: "banner", default: "") == "bundled", "nothing changes under the user")
        #expect(client.value(forKey: "retries") == nil)
        #expect(client.pendingTemplateVersion == 1)
        #expect(client.activeTemplateVersion == nil)

        #expect(client.activate())
        #expect(client.string(forKey: "banner", default: "") == "Welcome!")
        #expect(client.value(forKey: "banner")?.source == .remote)
        #expect(client.int(forKey: "retries", default: 0) == 3)
        #expect(client.activeTemplateVersion == 1)
        #expect(client.pendingTemplateVersion == nil)
        let update = await updates.next()
        #expect(update == ConfigUpdate(changedKeys: ["banner", "retries"], reason: .activation, templateVersion: 1))
        #expect(!client.activate(), "nothing is waiting")

        let request = try #require(setup.transport.requests(to: .fetch).first)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == "http://127.0.0.1:9/v1/projects/shop/environments/prod/fetch")
        #expect(request.headers["Authorization"] == "Bearer vane_client_secret")
        #expect(request.headers["If-None-Match"] == nil, "no ETag before there are values")
        let body = try JSONValue.parse(Array(try #require(request.body))).objectValue
        #expect(body?["context"]?.objectValue?["randomizationId"]?.stringValue == client.installationId)
    }

    @Test func theETagGoesBackAndA304ConfirmsTheValuesWithTheServersNewETag() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "Welcome!"], etag: "\"e1\""),
            .notModified(etag: "\"e2\""),
            .status(200, body: #"{"state":"NO_CHANGE","templateVersion":"2"}"#),
            .update(version: 3, ["banner": "Hello"], etag: "\"e3\"")
        )
        let client = try setup.client()
        try await client.fetchAndActivate()
        #expect(try await client.fetch(minimumInterval: 0) == .noChange)
        #expect(try await client.fetch(minimumInterval: 0) == .noChange)
        #expect(client.string(forKey: "banner", default: "") == "Welcome!")
        #expect(client.pendingTemplateVersion == nil, "a 304 and NO_CHANGE bring nothing to activate")
        #expect(try await client.fetch(minimumInterval: 0) == .fetched(templateVersion: 3))
        // The 304's ETag replaced the held one (a publish that changed nothing for this user).
        #expect(setup.sentETags == [nil, "\"e1\"", "\"e2\"", "\"e2\""])
        #expect(client.string(forKey: "banner", default: "") == "Welcome!")
        client.activate()
        #expect(client.string(forKey: "banner", default: "") == "Hello")
    }

    @Test func pendingValuesSendTheirOwnETag() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "one"], etag: "\"e1\""),
            .update(version: 2, ["banner": "two"], etag: "\"e2\""),
            .notModified(etag: "\"e2\"")
        )
        let client = try setup.client()
        try await client.fetchAndActivate()
        try await client.fetch(minimumInterval: 0)
        #expect(try await client.fetch(minimumInterval: 0) == .noChange)
        #expect(setup.sentETags == [nil, "\"e1\"", "\"e2\""], "the newest values' ETag, held or active")
        #expect(client.string(forKey: "banner", default: "") == "one")
        #expect(client.pendingTemplateVersion == 2, "confirmed pending values still wait")
    }

    @Test func theMinimumIntervalSendsNothingUntilItHasPassedOrTheContextChanged() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.always(.fetch, .notModified(etag: "\"e1\""))
        setup.transport.enqueue(.fetch, .update(version: 1, ["banner": "Welcome!"], etag: "\"e1\""))
        let client = try setup.client { $0.minimumFetchInterval = 3600 }
        let start = setup.clock.now
        try await client.fetchAndActivate()

        setup.clock.advance(by: 3599)
        #expect(try await client.fetch() == .notDue(nextFetchAt: start.addingTimeInterval(3600)))
        #expect(setup.transport.requests(to: .fetch).count == 1)

        client.updateContext { $0.userId = "user-7" }
        #expect(try await client.fetch() == .noChange, "a new context is fetched inside the interval")
        #expect(setup.transport.requests(to: .fetch).count == 2)
        #expect(try await client.fetch() == .notDue(nextFetchAt: start.addingTimeInterval(3599 + 3600)))

        setup.clock.advance(by: 3600)
        #expect(try await client.fetch() == .noChange)
        #expect(setup.transport.requests(to: .fetch).count == 3)
    }

    @Test func fetchAndActivateActivatesWhatWasFetchedBeforeEvenWhenItsFetchFails() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(.fetch, .update(version: 1, ["banner": "fetched earlier"]), .status(503))
        let client = try setup.client()
        try await client.fetch()
        await #expect(throws: VaneError.self) { try await client.fetchAndActivate(minimumInterval: 0) }
        #expect(client.string(forKey: "banner", default: "") == "fetched earlier")
        #expect(client.activeTemplateVersion == 1)
    }

    @Test(arguments: [
        ("<html>proxy error</html>", "not JSON"),
        (#"{"state":"UPDATE","entries":{"banner":"cut"#, "not JSON"),
        (#"{"state":"UPDATE","entries":{"banner":3},"templateVersion":"2"}"#, "entries.banner: expected a string"),
        (#"{"state":"LATER","templateVersion":"2"}"#, "state: expected UPDATE, NO_CHANGE or NO_TEMPLATE"),
    ])
    func aMalformedAnswerKeepsTheActiveValuesAndSaysWhere(body: String, says: String) async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "good"], etag: "\"e1\""),
            .status(200, body: body)
        )
        let client = try setup.client()
        try await client.fetchAndActivate()
        await #expect {
            try await client.fetch(minimumInterval: 0)
        } throws: { error in
            guard case VaneError.malformedResponse(let reason) = error else { return false }
            return reason.contains(says)
        }
        #expect(client.string(forKey: "banner", default: "") == "good")
        #expect(client.pendingTemplateVersion == nil)
        client.waitForWrites()
        #expect(try setup.client().string(forKey: "banner", default: "") == "good", "nothing bad reached the cache")
    }

    @Test func aRefusalCarriesTheServersMessageAndStartsNoBackoff() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        let envelope = #"{"error":{"code":401,"message":"the key was revoked","status":"UNAUTHENTICATED"}}"#
        setup.transport.enqueue(.fetch, .status(401, body: envelope), .update(version: 1, ["banner": "back"]))
        let client = try setup.client()
        await #expect(throws: VaneError.rejected(status: 401, message: "the key was revoked")) {
            try await client.fetch()
        }
        #expect(client.lastFetchError == .rejected(status: 401, message: "the key was revoked"))
        #expect(try await client.fetch() == .fetched(templateVersion: 1), "the next fetch is sent at once")
        #expect(client.lastFetchError == nil)
    }

    @Test func aTransportFailureKeepsTheValuesAndStartsNoBackoff() async throws {
        let setup = ScriptedSetup()
        defer { setup.removeFiles() }
        setup.transport.enqueue(
            .fetch,
            .update(version: 1, ["banner": "good"]),
            .fail(.timedOut(seconds: 30)),
            .fail(.cannotConnect(reason: "offline")),
            .update(version: 2, ["banner": "newer"])
        )
        let client = try setup.client()
        try await client.fetchAndActivate()
        await #expect(throws: VaneError.transport(.timedOut(seconds: 30))) {
            try await client.fetch(minimumInterval: 0)
        }
        await #expect(throws: VaneError.transport(.cannotConnect(reason: "offline"))) {
            try await client.fetch(minimumInterval: 0)
        }
        #expect(client.lastFetchError == .transport(.cannotConnect(reason: "offline")))
        #expect(client.string(forKey: "banner", default: "") == "good")
        #expect(try await client.fetch(minimumInterval: 0) == .fetched(templateVersion: 2))
    }
}
