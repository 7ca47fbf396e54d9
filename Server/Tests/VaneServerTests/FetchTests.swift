import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer

@Suite(.timeLimit(.minutes(5))) struct FetchTests {
    static let fetchPath = TestServer.demoPath + "/fetch"

    @Test(arguments: TestDatabase.allCases)
    func evaluatesTheContextWithMetadata(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let reply = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["randomizationId": "user-1", "device.country": "DE", "app.version": "2.1.0"]]
            )
            #expect(reply.status == .ok)
            #expect(reply.object?["state"] == "UPDATE")
            #expect(reply.object?["templateVersion"] == "1")
            let entries = try #require(reply.object?["entries"]?.objectValue)
            #expect(entries["banner_text"] == "Willkommen bei Vane!")
            #expect(entries["settings_layout"]?.stringValue?.contains("labs") == true)
            #expect(reply.object?["metadata"]?.objectValue?["payments_enabled"]?.objectValue?["realtime"] == true)
            // A client never sees conditions.
            #expect(!reply.text.contains("germany_austria"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func unchangedResultsAnswer304AcrossPublishes(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let context: JSONValue = ["context": ["randomizationId": "user-1", "device.country": "us"]]
            let first = try await server.send(.post, Self.fetchPath, key: key, json: context)
            let etag = try #require(first.etag)
            let again = try await Self.fetch(server, key: key, context, ifNoneMatch: etag)
            #expect(again.status == .notModified)
            #expect(again.etag == etag)
            let noChange = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["randomizationId": "user-1", "device.country": "us"], "etag": .string(etag)]
            )
            #expect(noChange.json == ["state": "NO_CHANGE", "templateVersion": "1"])

            // A publish that changes only the German banner: this US user still gets 304, with a
            // fresh ETag naming the same values, which is then answered without evaluating.
            let template = try await server.send(.get, TestServer.demoPath + "/template")
            var updated = try #require(template.object)
            updated["version"] = nil
            let changed = JSONValue.object(updated).serialized().replacingOccurrences(
                of: "Willkommen bei Vane!",
                with: "Servus!"
            )
            #expect(
                try await server.send(.put, TestServer.demoPath + "/template", text: changed, headers: [.ifMatch: "*"])
                    .status == .ok
            )
            let american = try await Self.fetch(server, key: key, context, ifNoneMatch: etag)
            #expect(american.status == .notModified)
            let fresh = try #require(american.etag)
            #expect(fresh != etag)
            #expect(Self.valuesPart(fresh) == Self.valuesPart(etag))
            let oncemore = try await Self.fetch(server, key: key, context, ifNoneMatch: fresh)
            #expect(oncemore.status == .notModified)
            #expect(oncemore.etag == fresh)
            let german = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: ["context": ["device.country": "de"]]
            )
            #expect(german.object?["entries"]?.objectValue?["banner_text"] == "Servus!")
            #expect(german.object?["templateVersion"] == "2")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func anETagOnlyVouchesForItsOwnRequestAndVersion(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let american: JSONValue = ["context": ["randomizationId": "user-1", "device.country": "us"]]
            let german: JSONValue = ["context": ["randomizationId": "user-1", "device.country": "de"]]
            let americanETag = try #require(try await server.send(.post, Self.fetchPath, key: key, json: american).etag)
            let germanETag = try #require(try await server.send(.post, Self.fetchPath, key: key, json: german).etag)
            func fetch(_ body: String, _ ifNoneMatch: String) async throws -> TestServer.Reply {
                try await Self.fetch(server, key: key, text: body, ifNoneMatch: ifNoneMatch)
            }

            // Another user's ETag does not hide that user's values.
            let moved = try await fetch(german.serialized(), americanETag)
            #expect(moved.status == .ok)
            #expect(moved.object?["entries"]?.objectValue?["banner_text"] == "Willkommen bei Vane!")
            // The American proof cannot vouch for German values.
            let forged = "\"" + Self.valuesPart(germanETag) + "." + Self.proofAndRest(americanETag) + "\""
            #expect(try await fetch(american.serialized(), forged).status == .ok)
            // The same context written differently is evaluated, and unchanged.
            let spaced = #"{ "context" : { "device.country" : "us", "randomizationId" : "user-1" } }"#
            #expect(try await fetch(spaced, americanETag).status == .notModified)
            // Lists, weak tags, the values alone and `*` are understood; anything else is not a match.
            #expect(try await fetch(american.serialized(), #""nope", W/"# + americanETag).status == .notModified)
            #expect(
                try await fetch(american.serialized(), "\"" + Self.valuesPart(americanETag) + "\"").status
                    == .notModified
            )
            #expect(try await fetch(american.serialized(), "*").status == .notModified)
            for garbage in [
                "", "\"\"", "\"zz\"", "\"" + Self.valuesPart(americanETag) + ".xyz\"", americanETag + ".", "\u{1F600}",
            ] {
                #expect(try await fetch(american.serialized(), garbage).status == .ok, "If-None-Match: \(garbage)")
            }

            // A publish that changes this user's values: the old proof no longer holds.
            var template = try #require(try await server.send(.get, TestServer.demoPath + "/template").object)
            template["version"] = nil
            let changed = JSONValue.object(template).serialized().replacingOccurrences(
                of: "Welcome to Vane!",
                with: "Hello from Vane!"
            )
            #expect(changed.contains("Hello from Vane!"))
            #expect(
                try await server.send(.put, TestServer.demoPath + "/template", text: changed, headers: [.ifMatch: "*"])
                    .status == .ok
            )
            let updated = try await fetch(american.serialized(), americanETag)
            #expect(updated.status == .ok)
            #expect(updated.object?["entries"]?.objectValue?["banner_text"] == "Hello from Vane!")
        }
    }

    @Test func aProofDoesNotOutliveItsDatabase() async throws {
        // Two fresh databases number their versions alike: version 2 on each, different values.
        let body: JSONValue = ["context": ["randomizationId": "user-1"]]
        @Sendable func template(_ value: String) -> JSONValue {
            ["parameters": ["colour": ["defaultValue": ["value": .string(value)]]]]
        }
        let etag = try await TestServer.run(.sqlite) { server in
            #expect(try await server.publish(template("red")).object?["version"]?.objectValue?["versionNumber"] == "2")
            let key = try await server.createKey(role: "client")
            return try #require(try await server.send(.post, Self.fetchPath, key: key, json: body).etag)
        }
        try await TestServer.run(.sqlite) { server in
            #expect(try await server.publish(template("blue")).object?["version"]?.objectValue?["versionNumber"] == "2")
            let key = try await server.createKey(role: "client")
            let reply = try await Self.fetch(server, key: key, body, ifNoneMatch: etag)
            #expect(reply.status == .ok)
            #expect(reply.object?["entries"]?.objectValue?["colour"] == "blue")
        }
    }

    @Test func aScheduledChangeIsNotHiddenByA304() async throws {
        let clock = TestClock()
        try await TestServer.run(.sqlite, clock: clock) { server in
            let key = try await server.createKey(role: "client")
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
            formatter.timeZone = TimeZone(identifier: "UTC")
            let body: JSONValue = ["context": ["randomizationId": "user-1"]]
            // A launch ten minutes ahead, which the server's clock then jumps past. The ETag of the
            // "before" value must stop vouching for it at the launch.
            let launch = Date(timeIntervalSince1970: (clock.now.timeIntervalSince1970 + 600).rounded(.down))
            let template: JSONValue = [
                "conditions": [
                    [
                        "name": "launched",
                        "expression": .string("dateTime >= dateTime('\(formatter.string(from: launch))', 'UTC')"),
                    ]
                ],
                "parameters": [
                    "phase": [
                        "defaultValue": ["value": "before"],
                        "conditionalValues": ["launched": ["value": "after"]],
                    ]
                ],
            ]
            #expect(try await server.publish(template).status == .ok)
            let first = try await server.send(.post, Self.fetchPath, key: key, json: body)
            #expect(first.object?["entries"]?.objectValue?["phase"] == "before")
            let etag = try #require(first.etag)
            let early = try await Self.fetch(server, key: key, body, ifNoneMatch: etag)
            #expect(early.status == .notModified)
            clock.advance(seconds: 601)
            let late = try await Self.fetch(server, key: key, body, ifNoneMatch: etag)
            #expect(late.status == .ok)
            #expect(late.object?["entries"]?.objectValue?["phase"] == "after")
        }
    }

    /// A fetch with `If-None-Match`, of a JSON body or of exactly `text`.
    static func fetch(
        _ server: TestServer,
        key: String,
        _ json: JSONValue? = nil,
        text: String? = nil,
        ifNoneMatch: String
    ) async throws -> TestServer.Reply {
        try await server.send(.post, fetchPath, key: key, json: json, text: text, headers: [.ifNoneMatch: ifNoneMatch])
    }

    /// The part of a fetch ETag that names the values: before the first dot, without quotes.
    static func valuesPart(_ etag: String) -> String {
        String(etag.trimmingCharacters(in: ["\""]).split(separator: ".").first ?? "")
    }

    /// Everything after the values part, without quotes.
    static func proofAndRest(_ etag: String) -> String {
        etag.trimmingCharacters(in: ["\""]).split(separator: ".").dropFirst().joined(separator: ".")
    }

    @Test(arguments: TestDatabase.allCases)
    func malformedRequestsGetPreciseErrors(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let truncated = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                text: #"{"context": {"randomizationId": "#
            )
            #expect(truncated.status == .badRequest)
            #expect(truncated.errorMessage?.contains("line 1") == true)
            let nested = try await server.send(.post, Self.fetchPath, key: key, json: ["context": ["nested": ["a": 1]]])
            #expect(nested.status == .badRequest)
            let details = nested.object?["error"]?.objectValue?["details"]?.arrayValue
            #expect(details?.first?.objectValue?["path"] == "context.nested")
            #expect(
                try await server.send(.post, Self.fetchPath, key: key, json: ["context": "user"]).status == .badRequest
            )
            #expect(try await server.send(.post, Self.fetchPath, key: key, text: "[]").status == .badRequest)
            let huge = "{\"context\": {\"a\": \"" + String(repeating: "x", count: 70_000) + "\"}}"
            #expect(try await server.send(.post, Self.fetchPath, key: key, text: huge).status == .contentTooLarge)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func rateLimitAnswers429WithRetryAfter(database: TestDatabase) async throws {
        // One request every ten seconds, a burst of one: the second request is refused even on a
        // machine so busy that each request takes a second.
        let slowRate: (inout ServerConfiguration) -> Void = { $0.rateLimit = 0.1 }
        try await TestServer.run(database, configure: slowRate) { server in
            let key = try await server.createKey(role: "client")
            var limited: TestServer.Reply?
            for _ in 0..<5 {
                let reply = try await server.send(.post, Self.fetchPath, key: key, json: [:])
                if reply.status == .tooManyRequests {
                    limited = reply
                    break
                }
            }
            let reply = try #require(limited)
            #expect(reply.errorStatus == "RESOURCE_EXHAUSTED")
            #expect(Int(reply.headers[.retryAfter] ?? "") ?? 0 >= 1)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func environmentWithoutTemplateSaysSo(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            #expect(
                try await server.send(.post, "/v1/projects/demo/environments", json: ["id": "qa"]).status == .created
            )
            let key = try await server.createKey(role: "client", environment: "qa")
            let reply = try await server.send(.post, "/v1/projects/demo/environments/qa/fetch", key: key, json: [:])
            #expect(reply.json == ["state": "NO_TEMPLATE", "entries": [:], "templateVersion": "0"])
        }
    }
}
