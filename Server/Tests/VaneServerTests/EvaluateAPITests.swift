import Foundation
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `POST …/evaluate`: the console's "Who gets what" through the admin API, on both databases.
@Suite struct EvaluateAPITests {
    static let evaluatePath = TestServer.demoPath + "/evaluate"

    /// The answer's key rows by key.
    static func keys(_ reply: TestServer.Reply) -> [String: JSONObject] {
        var rows: [String: JSONObject] = [:]
        for row in reply.object?["keys"]?.arrayValue ?? [] {
            if let object = row.objectValue, let key = object["key"]?.stringValue { rows[key] = object }
        }
        return rows
    }

    @Test(arguments: TestDatabase.allCases)
    func everyKeyHasItsValueAndWhyBesideAnotherEnvironment(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let german: JSONValue = ["context": ["randomizationId": "user-1", "device.country": "de"]]
            let reply = try await server.send(.post, Self.evaluatePath, json: german)
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(reply.object?["versionNumber"] == "1")
            let rows = Self.keys(reply)
            let banner = try #require(rows["banner_text"])
            #expect(banner["value"] == "Willkommen bei Vane!")
            #expect(banner["source"] == "remote")
            #expect(banner["reason"] == "conditionalValue")
            #expect(banner["condition"] == "germany_austria")
            #expect(banner["expression"] == "device.country in ['de', 'at']")
            #expect(banner["title"] == "Home banner")
            #expect(banner["compare"] == nil)
            #expect(rows["payments_enabled"]?["reason"] == "defaultValue")
            #expect(rows["payments_enabled"]?["value"] == "true")

            // Staging gets another banner; the comparison shows it and marks the difference.
            let staging = "/v1/projects/demo/environments/staging"
            let template = try #require(try await server.send(.get, staging + "/template").object)
            var parameters = try #require(template["parameters"]?.objectValue)
            parameters["banner_text"] = ["defaultValue": ["value": "Staging"], "valueType": "STRING"]
            var changed = template
            changed["parameters"] = .object(parameters)
            changed["version"] = nil
            #expect(try await server.publish(.object(changed), path: staging).status == .ok)
            let compared = try await server.send(
                .post,
                Self.evaluatePath,
                json: ["context": ["randomizationId": "user-1"], "compareEnvironment": "staging"]
            )
            #expect(compared.status == .ok, "\(compared.text)")
            #expect(compared.object?["compareEnvironment"] == "staging")
            #expect(compared.object?["compareVersionNumber"] == "2")
            let comparedRows = Self.keys(compared)
            #expect(comparedRows["banner_text"]?["value"] == "Welcome to Vane!")
            #expect(comparedRows["banner_text"]?["compare"]?.objectValue?["value"] == "Staging")
            #expect(comparedRows["banner_text"]?["differs"] == .bool(true))
            #expect(comparedRows["payments_enabled"]?["differs"] == .bool(false))

            // A server key of the environment reads what its SDK downloads anyway.
            let serverKey = try await server.createKey(role: "server")
            #expect(try await server.send(.post, Self.evaluatePath, key: serverKey, json: german).status == .ok)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func refusalsSayWhatIsWrong(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let badContext = try await server.send(
                .post,
                Self.evaluatePath,
                json: ["context": ["randomizationId": 5]]
            )
            #expect(badContext.status == .badRequest)
            #expect(badContext.text.contains("randomizationId"), "\(badContext.text)")

            let nowhere = try await server.send(
                .post,
                Self.evaluatePath,
                json: ["context": [:], "compareEnvironment": "nowhere"]
            )
            #expect(nowhere.status == .notFound, "\(nowhere.text)")

            let client = try await server.createKey(role: "client")
            let denied = try await server.send(.post, Self.evaluatePath, key: client, json: ["context": [:]])
            #expect(denied.status == .forbidden)
            // A server key of production may not read staging through a comparison.
            let serverKey = try await server.createKey(role: "server")
            let other = try await server.send(
                .post,
                Self.evaluatePath,
                key: serverKey,
                json: ["context": [:], "compareEnvironment": "staging"]
            )
            #expect(other.status == .forbidden)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func impactCountsTheSampledUsersWhoseValueChanges(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let impactPath = TestServer.demoPath + "/template/impact"
            let live = try #require(try await server.send(.get, TestServer.demoPath + "/template").object)
            var parameters = try #require(live["parameters"]?.objectValue)
            var banner = try #require(parameters["banner_text"]?.objectValue)
            banner["description"] = "only words"
            parameters["banner_text"] = .object(banner)
            var wordsOnly = live
            wordsOnly["parameters"] = .object(parameters)
            let none = try await server.send(.post, impactPath, json: .object(wordsOnly))
            #expect(none.status == .ok, "\(none.text)")
            #expect(none.object?["keys"] == .array([]))

            // Everyone outside DE and AT gets the new default; the German text stays.
            banner["defaultValue"] = ["value": "Hello"]
            parameters["banner_text"] = .object(banner)
            var changed = live
            changed["parameters"] = .object(parameters)
            let reply = try await server.send(.post, impactPath, json: .object(changed))
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(reply.object?["versionNumber"] == "1")
            #expect(reply.object?["synthetic"] == .number(JSONNumber(ValueChangeSample.syntheticCount)))
            let keys = reply.object?["keys"]?.arrayValue?.compactMap(\.objectValue) ?? []
            #expect(keys.map { $0["key"] } == ["banner_text"])
            let count = try #require(keys.first?["changed"]?.numberValue?.intValue)
            #expect(count > 0 && count < ValueChangeSample.syntheticCount, "\(reply.text)")
            // The console's rule, so the same count as the console's review would show.
            let expected = ValueChangeSample.estimate(
                from: try ConfigTemplate(json: .object(live)),
                to: try ConfigTemplate(json: .object(changed)),
                savedContexts: [],
                at: Date()
            )
            guard case .counts(let counts, _) = expected else { throw TestSetupError("no counts") }
            #expect(counts.first?.changed == count)

            let unreadable = try await server.send(.post, impactPath, text: "{\"parameters\": 5}")
            #expect(unreadable.status == .badRequest)
            let client = try await server.createKey(role: "client")
            #expect(try await server.send(.post, impactPath, key: client, json: .object(changed)).status == .forbidden)
        }
    }
}
