import Crypto
import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// OFREP over real HTTP, checked against the OFREP 0.3.0 schemas' required fields.
@Suite(.timeLimit(.minutes(5))) struct OFREPTests {
    static let single = "/ofrep/v1/evaluate/flags/"
    static let bulk = "/ofrep/v1/evaluate/flags"

    /// One flag of each value type and each reason.
    static let template: JSONValue = [
        "conditions": [
            ["name": "germany_austria", "expression": "device.country in ['de', 'at']"],
            ["name": "half", "expression": "percent('half') between 50 and 100"],
        ],
        "parameters": [
            "payments_enabled": [
                "defaultValue": ["value": "true"], "valueType": "BOOLEAN",
                "vane": ["title": "Payments", "category": "Safety", "allowedValues": ["true", "false"]],
            ],
            "max_upload_mb": ["defaultValue": ["value": "25"], "valueType": "NUMBER"],
            "discount": ["defaultValue": ["value": "0.5"], "valueType": "NUMBER"],
            "layout": ["defaultValue": ["value": #"{"columns": 2, "showHero": true}"#], "valueType": "JSON"],
            "banner_text": [
                "defaultValue": ["value": "Welcome!"],
                "conditionalValues": ["germany_austria": ["value": "Willkommen!"]],
                "valueType": "STRING",
            ],
            "checkout_variant": [
                "defaultValue": ["value": "control"],
                "conditionalValues": ["half": ["value": "one_page"]],
            ],
            "legacy_mode": ["defaultValue": ["useInAppDefault": true], "valueType": "BOOLEAN"],
        ],
    ]

    // MARK: - Values and reasons

    @Test(arguments: TestDatabase.allCases)
    func valuesHaveTheirDeclaredJSONTypes(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try #require(try await server.publish(Self.template).status == .ok)
            let key = try await server.createKey(role: "client")

            let bool = try await server.evaluate("payments_enabled", key: key)
            #expect(bool.status == .ok)
            try expectSuccess(bool.object, key: "payments_enabled", reason: "STATIC", variant: "true")
            #expect(bool.object?["value"] == .bool(true))
            let metadata = bool.object?["metadata"]?.objectValue
            #expect(metadata?["title"] == "Payments")
            #expect(metadata?["category"] == "Safety")
            #expect(metadata?["templateVersion"]?.stringValue != nil)
            #expect(metadata?["allowedValues"] == nil, "metadata must stay flat")

            let integer = try await server.evaluate("max_upload_mb", key: key)
            try expectSuccess(integer.object, key: "max_upload_mb", reason: "STATIC", variant: "25")
            #expect(integer.object?["value"]?.numberValue?.text == "25")

            let float = try await server.evaluate("discount", key: key)
            try expectSuccess(float.object, key: "discount", reason: "STATIC", variant: "0.5")
            #expect(float.object?["value"]?.numberValue?.text == "0.5")

            let json = try await server.evaluate("layout", key: key)
            // A JSON value is named by a hash of its text (OpenFeature providers need a variant).
            let layoutText = #"{"columns": 2, "showHero": true}"#
            let layoutVariant =
                "value-" + Array(SHA256.hash(data: Array(layoutText.utf8)).prefix(8)).withUnsafeBytes { Hex.encode($0) }
            try expectSuccess(json.object, key: "layout", reason: "STATIC", variant: layoutVariant)
            #expect(json.object?["value"] == ["columns": .number(JSONNumber(2)), "showHero": true])

            let string = try await server.evaluate("banner_text", key: key, context: ["targetingKey": "u1"])
            try expectSuccess(string.object, key: "banner_text", reason: "DEFAULT", variant: "Welcome!")
            #expect(string.object?["value"] == "Welcome!")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func reasonsNameWhatDecided(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try #require(try await server.publish(Self.template).status == .ok)
            let key = try await server.createKey(role: "server")

            let targeted = try await server.evaluate(
                "banner_text",
                key: key,
                context: ["targetingKey": "u1", "device.country": "de"]
            )
            try expectSuccess(
                targeted.object,
                key: "banner_text",
                reason: "TARGETING_MATCH",
                variant: "Willkommen!"
            )
            #expect(!targeted.text.contains("germany_austria"), "a client never learns a condition's name")
            #expect(targeted.object?["value"] == "Willkommen!")

            let inside = Self.targetingKey(inSplit: true)
            let split = try await server.evaluate(
                "checkout_variant",
                key: key,
                context: ["targetingKey": .string(inside)]
            )
            try expectSuccess(split.object, key: "checkout_variant", reason: "SPLIT", variant: "one_page")
            #expect(split.object?["value"] == "one_page")

            let outside = Self.targetingKey(inSplit: false)
            let control = try await server.evaluate(
                "checkout_variant",
                key: key,
                context: ["targetingKey": .string(outside)]
            )
            try expectSuccess(control.object, key: "checkout_variant", reason: "DEFAULT", variant: "control")
            #expect(control.object?["value"] == "control")
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func useInAppDefaultIsDisabledWithoutValue(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            try #require(try await server.publish(Self.template).status == .ok)
            let key = try await server.createKey(role: "client")

            let disabled = try await server.evaluate("legacy_mode", key: key)
            #expect(disabled.status == .ok)
            try expectSuccess(disabled.object, key: "legacy_mode", reason: "DISABLED", variant: "")
            #expect(disabled.object?["value"] == nil, "codeDefaultFlag: the app's own default applies")

            let all = try await server.evaluateAll(key: key)
            let item = try #require(all.flag("legacy_mode"))
            try expectSuccess(item, key: "legacy_mode", reason: "DISABLED", variant: "")
            #expect(item["value"] == nil)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func unknownFlagsAndMissingTemplatesAreNotFound(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let unknown = try await server.evaluate("no_such_flag", key: key)
            #expect(unknown.status == .notFound)
            try expectFailure(unknown.object, key: "no_such_flag", code: "FLAG_NOT_FOUND")

            let created = try await server.send(
                .post,
                "/v1/projects/demo/environments",
                json: ["id": "empty", "name": "Empty"]
            )
            try #require(created.status == .created)
            let emptyKey = try await server.createKey(role: "client", environment: "empty")
            let none = try await server.evaluate("payments_enabled", key: emptyKey)
            #expect(none.status == .notFound)
            try expectFailure(none.object, key: "payments_enabled", code: "FLAG_NOT_FOUND")

            let all = try await server.evaluateAll(key: emptyKey)
            #expect(all.status == .ok)
            #expect(all.object?["flags"] == .array([]))
            #expect(all.etag != nil)
        }
    }

    // MARK: - Authentication and authorization

    @Test(arguments: TestDatabase.allCases)
    func missingOrUnknownKeysAre401WithoutBody(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            for path in [Self.single + "payments_enabled", Self.bulk] {
                let missing = try await server.send(.post, path, key: nil, json: ["context": [:]])
                #expect(missing.status == .unauthorized)
                #expect(missing.text.isEmpty)
                let unknown = try await server.send(.post, path, key: "vane_client_unknown", json: ["context": [:]])
                #expect(unknown.status == .unauthorized)
                #expect(unknown.text.isEmpty)
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func keysOfAnotherEnvironmentAre403WithoutBody(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let staging = try await server.createKey(role: "client", environment: "staging")
            let headers = try Self.vaneHeaders("demo", "production")
            for path in [Self.single + "payments_enabled", Self.bulk] {
                let reply = try await server.send(.post, path, key: staging, json: ["context": [:]], headers: headers)
                #expect(reply.status == .forbidden)
                #expect(reply.text.isEmpty)
            }
            // Without the headers the key evaluates its own environment.
            let own = try await server.evaluate("payments_enabled", key: staging)
            #expect(own.status == .ok)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func adminKeysMustNameTheEnvironment(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let single = try await server.evaluate("payments_enabled", key: TestServer.adminKey)
            #expect(single.status == .badRequest)
            try expectFailure(single.object, key: "payments_enabled", code: "GENERAL")
            #expect(single.object?["errorDetails"]?.stringValue?.contains("X-Vane-Environment") == true)

            let bulk = try await server.evaluateAll(key: TestServer.adminKey)
            #expect(bulk.status == .badRequest)
            try expectBulkFailure(bulk.object, code: "GENERAL")

            let headers = try Self.vaneHeaders("demo", "production")
            let named = try await server.evaluate("payments_enabled", key: TestServer.adminKey, headers: headers)
            #expect(named.status == .ok)
            #expect(named.object?["value"] == .bool(true))
            let all = try await server.evaluateAll(key: TestServer.adminKey, headers: headers)
            #expect(all.status == .ok)
            #expect(all.flag("checkout_variant") != nil)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func apiKeyHeaderAuthenticates(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            var headers = HTTPFields()
            headers[try #require(APIKeyCredentials.apiKeyHeader)] = key
            let single = try await server.send(
                .post,
                Self.single + "payments_enabled",
                key: nil,
                json: ["context": [:]],
                headers: headers
            )
            #expect(single.status == .ok)
            #expect(single.object?["value"] == .bool(true))
            let bulk = try await server.send(.post, Self.bulk, key: nil, json: ["context": [:]], headers: headers)
            #expect(bulk.status == .ok)
        }
    }

    // MARK: - Request bodies

    @Test(arguments: TestDatabase.allCases)
    func malformedBodiesAreParseErrors(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            for text in [#"{"context": {"targetingKey": "u1""#, "{not json}"] {
                let single = try await server.send(.post, Self.single + "payments_enabled", key: key, text: text)
                #expect(single.status == .badRequest)
                try expectFailure(single.object, key: "payments_enabled", code: "PARSE_ERROR")
                let bulk = try await server.send(.post, Self.bulk, key: key, text: text)
                #expect(bulk.status == .badRequest)
                try expectBulkFailure(bulk.object, code: "PARSE_ERROR")
            }
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func unusableContextsAreInvalidContext(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let nested: JSONValue = ["context": ["targetingKey": "u1", "nested": ["a": 1]]]
            let single = try await server.send(.post, Self.single + "payments_enabled", key: key, json: nested)
            #expect(single.status == .badRequest)
            try expectFailure(single.object, key: "payments_enabled", code: "INVALID_CONTEXT")
            #expect(single.object?["errorDetails"]?.stringValue?.contains("context.nested") == true)

            let bulk = try await server.send(.post, Self.bulk, key: key, json: ["context": ["targetingKey": 42]])
            #expect(bulk.status == .badRequest)
            try expectBulkFailure(bulk.object, code: "INVALID_CONTEXT")
            #expect(bulk.object?["errorDetails"]?.stringValue?.contains("context.targetingKey") == true)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func missingBodyContextAndTargetingKeyAreAnEmptyContext(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let noBody = try await server.send(.post, Self.single + "banner_text", key: key)
            #expect(noBody.status == .ok)
            #expect(noBody.object?["value"] == "Welcome to Vane!")
            let emptyObject = try await server.send(.post, Self.single + "banner_text", key: key, json: [:])
            #expect(emptyObject.status == .ok)
            let emptyContext = try await server.send(.post, Self.bulk, key: key, json: ["context": [:]])
            #expect(emptyContext.status == .ok)
        }
    }

    // MARK: - Rate limiting

    @Test(arguments: TestDatabase.allCases)
    func rateLimitedRequestsAre429WithRetryAfterSeconds(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: Self.tinyRateLimit) { server in
            let key = try await server.createKey(role: "client")
            #expect(try await server.evaluate("payments_enabled", key: key).status == .ok)
            let limited = try await server.evaluate("payments_enabled", key: key)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.text.isEmpty)
            let retryAfter = try #require(limited.headers[.retryAfter])
            #expect((Int(retryAfter) ?? 0) >= 1, "Retry-After must be whole seconds, got \(retryAfter)")
            #expect(try await server.evaluateAll(key: key).status == .tooManyRequests)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func fetchAndOFREPShareOneBudget(database: TestDatabase) async throws {
        try await TestServer.run(database, configure: Self.tinyRateLimit) { server in
            let key = try await server.createKey(role: "client")
            let fetch = try await server.send(.post, TestServer.demoPath + "/fetch", key: key, json: ["context": [:]])
            #expect(fetch.status == .ok)
            let limited = try await server.evaluateAll(key: key)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter].flatMap { Int($0) } != nil)
        }
    }

    // MARK: - Bulk

    @Test(arguments: TestDatabase.allCases)
    func bulkAnswers304WhileTheResultIsUnchanged(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let key = try await server.createKey(role: "client")
            let context: JSONValue = ["targetingKey": "u1", "device.country": "us"]
            let first = try await server.evaluateAll(key: key, context: context)
            #expect(first.status == .ok)
            let etag = try #require(first.etag)
            let flags = try #require(first.object?["flags"]?.arrayValue)
            #expect(flags.count == 4)
            for case .object(let item) in flags {
                let flagKey = try #require(item["key"]?.stringValue)
                try expectSuccess(item, key: flagKey, reason: nil, variant: nil)
            }
            #expect(first.object?["metadata"]?.objectValue?["templateVersion"]?.stringValue != nil)
            #expect(first.object?["eventStreams"]?.arrayValue?.count == 1, "OFREPEventStreamTests checks the stream")

            let again = try await server.evaluateAll(key: key, context: context, headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(again.text.isEmpty)
            #expect(again.etag == etag)

            let german = try await server.evaluateAll(
                key: key,
                context: ["targetingKey": "u1", "device.country": "de"],
                headers: [.ifNoneMatch: etag]
            )
            #expect(german.status == .ok)
            #expect(german.etag != etag)

            try #require(try await server.publish(Self.template).status == .ok)
            let published = try await server.evaluateAll(key: key, context: context, headers: [.ifNoneMatch: etag])
            #expect(published.status == .ok)
            #expect(published.etag != etag)
            #expect(published.flag("discount")?["value"]?.numberValue?.text == "0.5")
        }
    }

    // MARK: - Helpers

    /// `X-Vane-Project` and `X-Vane-Environment`.
    static func vaneHeaders(_ project: String, _ environment: String) throws -> HTTPFields {
        var headers = HTTPFields()
        headers[try #require(OFREPRequest.projectHeader)] = project
        headers[try #require(OFREPRequest.environmentHeader)] = environment
        return headers
    }

    /// 0.01 requests per second: a burst of one, then a wait of about 100 s.
    static let tinyRateLimit: @Sendable (inout ServerConfiguration) -> Void = { $0.rateLimit = 0.01 }

    /// A targeting key inside (or outside) the `half` condition's bucket range (50 %, 100 %].
    static func targetingKey(inSplit: Bool) -> String {
        var index = 0
        while true {
            let candidate = "user-\(index)"
            let bucket = PercentBucket.microPercentile(seed: "half", randomizationId: candidate)
            if (bucket > 50_000_000) == inSplit { return candidate }
            index += 1
        }
    }
}

/// Checks an `evaluationSuccess`: required `key`, `reason` and `variant` (equal to `variant`
/// when given) and flat `metadata`.
func expectSuccess(
    _ object: JSONObject?,
    key: String,
    reason: String?,
    variant: String?,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let object = try #require(object, sourceLocation: sourceLocation)
    #expect(object["key"] == .string(key), sourceLocation: sourceLocation)
    let actualReason = try #require(object["reason"]?.stringValue, sourceLocation: sourceLocation)
    let reasons: Set = ["STATIC", "TARGETING_MATCH", "SPLIT", "DISABLED", "UNKNOWN", "DEFAULT"]
    #expect(reasons.contains(actualReason), sourceLocation: sourceLocation)
    if let reason { #expect(actualReason == reason, sourceLocation: sourceLocation) }
    let actualVariant = try #require(
        object["variant"]?.stringValue,
        "every successful evaluation names a variant",
        sourceLocation: sourceLocation
    )
    if let variant { #expect(actualVariant == variant, sourceLocation: sourceLocation) }
    #expect(object["errorCode"] == nil, sourceLocation: sourceLocation)
    if let metadata = object["metadata"] {
        let members = try #require(metadata.objectValue, sourceLocation: sourceLocation)
        for member in members {
            switch member.value {
            case .string, .number, .bool: continue
            default: Issue.record("metadata.\(member.key) is not flat", sourceLocation: sourceLocation)
            }
        }
    }
}

/// Checks an `evaluationFailure` / `flagNotFound`: `key`, `errorCode`, and `errorDetails`.
func expectFailure(
    _ object: JSONObject?,
    key: String,
    code: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let object = try #require(object, sourceLocation: sourceLocation)
    #expect(object["key"] == .string(key), sourceLocation: sourceLocation)
    #expect(object["errorCode"] == .string(code), sourceLocation: sourceLocation)
    #expect(object["errorDetails"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(object["value"] == nil, sourceLocation: sourceLocation)
}

/// Checks a `bulkEvaluationFailure`: `errorCode` and `errorDetails`, no `key`.
func expectBulkFailure(
    _ object: JSONObject?,
    code: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let object = try #require(object, sourceLocation: sourceLocation)
    #expect(object["errorCode"] == .string(code), sourceLocation: sourceLocation)
    #expect(object["errorDetails"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
    #expect(object["key"] == nil, sourceLocation: sourceLocation)
    #expect(object["flags"] == nil, sourceLocation: sourceLocation)
}

extension TestServer {
    /// `POST /ofrep/v1/evaluate/flags/{flag}` with `{"context": context}`.
    func evaluate(
        _ flag: String,
        key: String?,
        context: JSONValue = [:],
        headers: HTTPFields = [:]
    ) async throws -> Reply {
        try await send(.post, OFREPTests.single + flag, key: key, json: ["context": context], headers: headers)
    }

    /// `POST /ofrep/v1/evaluate/flags` with `{"context": context}`.
    func evaluateAll(key: String?, context: JSONValue = [:], headers: HTTPFields = [:]) async throws -> Reply {
        try await send(.post, OFREPTests.bulk, key: key, json: ["context": context], headers: headers)
    }
}

extension TestServer.Reply {
    /// The bulk item for a flag key.
    func flag(_ key: String) -> JSONObject? {
        object?["flags"]?.arrayValue?.lazy.compactMap(\.objectValue).first { $0["key"] == .string(key) }
    }
}
