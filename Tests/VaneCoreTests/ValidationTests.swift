import Testing

@testable import VaneAuthoring
@testable import VaneCore

@Suite struct ValidationTests {
    func issues(_ json: JSONValue, options: ValidationOptions = .default) throws -> [ValidationIssue] {
        try ConfigTemplate(json: json).validate(options: options)
    }

    func errors(_ json: JSONValue, options: ValidationOptions = .default) throws -> [String: String] {
        var result: [String: String] = [:]
        for issue in try issues(json, options: options) where issue.severity == .error {
            result[issue.path.description] = issue.rule
        }
        return result
    }

    @Test func fixturesAreValid() throws {
        let client = try Fixtures.template("client-template.json").validate()
        #expect(!client.contains { $0.severity == .error }, "\(client)")
        let server = try Fixtures.template("server-template.json").validate()
        #expect(!server.contains { $0.severity == .error }, "\(server)")
    }

    @Test func conditionNames() throws {
        let found = try errors([
            "conditions": [
                ["name": "", "expression": "true"],
                ["name": "a", "expression": "true"],
                ["name": "a", "expression": "false"],
            ]
        ])
        #expect(found == ["conditions[0].name": "condition-name", "conditions[2].name": "condition-name"])
    }

    @Test func aPatternThatCanBacktrackCatastrophicallyIsAWarning() throws {
        let all = try issues([
            "conditions": [
                ["name": "slow", "expression": "app.customSignal['email'].matches(['^ok$', '(a+)+$'])"],
                ["name": "fine", "expression": "app.customSignal['email'].matches(['^[a-z]+@example\\.com$'])"],
            ]
        ])
        let slow = all.filter { $0.rule == "slow-pattern" }
        #expect(slow.count == 1, "\(all)")
        #expect(slow.first?.severity == .warning)
        #expect(slow.first?.path.description == "conditions[0].expression")
        #expect(slow.first?.message.contains("(a+)+$") == true)
    }

    @Test func conditionSyntaxNamesTheColumn() throws {
        let all = try issues(["conditions": [["name": "ios", "expression": "device.os == ios"]]])
        let issue = try #require(all.first)
        #expect(issue.path.description == "conditions[0].expression")
        #expect(issue.rule == "condition-syntax")
        #expect(issue.message.contains("column 14"))
    }

    @Test func unknownConditionsInConditionalValues() throws {
        let found = try errors([
            "conditions": [["name": "known", "expression": "true"]],
            "parameters": [
                "p": [
                    "defaultValue": ["value": "x"],
                    "conditionalValues": ["known": ["value": "y"], "ghost": ["value": "z"]],
                ]
            ],
        ])
        #expect(found == ["parameters.p.conditionalValues.ghost": "unknown-condition"])
    }

    @Test func valuesMustMatchTheirType() throws {
        let found = try errors([
            "parameters": [
                "b_ok": ["defaultValue": ["value": "TRUE"], "valueType": "BOOLEAN"],
                "b_bad": ["defaultValue": ["value": "yes"], "valueType": "BOOLEAN"],
                "n_ok": ["defaultValue": ["value": "-0.5"], "valueType": "NUMBER"],
                "n_ok2": ["defaultValue": ["value": ".5"], "valueType": "NUMBER"],
                "n_bad": ["defaultValue": ["value": "1e3"], "valueType": "NUMBER"],
                "n_bad2": ["defaultValue": ["value": "5."], "valueType": "NUMBER"],
                "j_ok": ["defaultValue": ["value": #"{"a": [1]}"#], "valueType": "JSON"],
                "j_bad": ["defaultValue": ["value": "{a: 1}"], "valueType": "JSON"],
                "s_any": ["defaultValue": ["value": "anything at all"], "valueType": "STRING"],
                "c_bad": [
                    "defaultValue": ["value": "true"],
                    "conditionalValues": ["c": ["value": "nope"]],
                    "valueType": "BOOLEAN",
                ],
            ],
            "conditions": [["name": "c", "expression": "true"]],
        ])
        #expect(
            found == [
                "parameters.b_bad.defaultValue.value": "value-type",
                "parameters.n_bad.defaultValue.value": "value-type",
                "parameters.n_bad2.defaultValue.value": "value-type",
                "parameters.j_bad.defaultValue.value": "value-type",
                "parameters.c_bad.conditionalValues.c.value": "value-type",
            ]
        )
    }

    @Test func unknownValueTypeIsAWarning() throws {
        let all = try issues(["parameters": ["p": ["defaultValue": ["value": "x"], "valueType": "DATE"]]])
        #expect(all.map(\.severity) == [.warning])
    }

    @Test func keys() throws {
        let long = String(repeating: "k", count: 257)
        let found = try errors([
            "parameters": [
                "good_key_1": ["defaultValue": ["value": "x"]],
                "_private": ["defaultValue": ["value": "x"]],
                "1starts_with_digit": ["defaultValue": ["value": "x"]],
                "has-dash": ["defaultValue": ["value": "x"]],
                "has space": ["defaultValue": ["value": "x"]],
                "ünïcode": ["defaultValue": ["value": "x"]],
                .init(stringLiteral: long): ["defaultValue": ["value": "x"]],
            ]
        ])
        #expect(
            Set(found.keys) == [
                #"parameters["1starts_with_digit"]"#, "parameters.has-dash", #"parameters["has space"]"#,
                #"parameters["ünïcode"]"#,
                "parameters.\(long)",
            ]
        )
    }

    @Test func duplicateKeysAcrossGroups() throws {
        let found = try errors([
            "parameters": ["shared": ["defaultValue": ["value": "x"]]],
            "parameterGroups": [
                "G1": [
                    "parameters": ["shared": ["defaultValue": ["value": "y"]], "G2": ["defaultValue": ["value": "z"]]]
                ],
                "G2": ["parameters": [:]],
            ],
        ])
        #expect(
            found == [
                "parameterGroups.G1.parameters.shared": "duplicate-key",
                "parameterGroups.G1.parameters.G2": "duplicate-key",
            ]
        )
    }

    @Test func firebaseLimits() throws {
        var parameters = JSONObject()
        for index in 0..<3001 { parameters["p\(index)"] = ["defaultValue": ["value": "x"]] }
        #expect(try errors(["parameters": .object(parameters)]) == ["parameters": "limit"])

        let conditions = JSONValue.array((0..<2001).map { ["name": .string("c\($0)"), "expression": "true"] })
        #expect(try errors(["conditions": conditions]) == ["conditions": "limit"])

        let big = String(repeating: "x", count: 500_001)
        let sizes = try errors([
            "parameters": [
                "a": ["defaultValue": ["value": .string(big)]], "b": ["defaultValue": ["value": .string(big)]],
            ]
        ])
        #expect(sizes == ["parameters": "limit"])

        let description = String(repeating: "d", count: 1025)
        #expect(try errors(["version": ["description": .string(description)]]) == ["version.description": "limit"])
        #expect(
            try errors([
                "parameters": [
                    "p": ["defaultValue": ["value": "x"], "description": .string(String(repeating: "d", count: 257))]
                ]
            ]) == [
                "parameters.p.description": "limit"
            ]
        )

        // Limits count characters, not UTF-8 bytes: each "é" is two bytes. 600,000 characters
        // (1.2 MB) pass; 1,200,000 do not, and the message counts characters.
        func twoValues(of count: Int) -> JSONValue {
            let value = JSONValue.string(String(repeating: "é", count: count))
            return ["parameters": ["a": ["defaultValue": ["value": value]], "b": ["defaultValue": ["value": value]]]]
        }
        #expect(try issues(twoValues(of: 300_000)).isEmpty)
        let overByCharacters = try issues(twoValues(of: 600_000))
        #expect(overByCharacters.map(\.rule) == ["limit"])
        #expect(overByCharacters.first?.message.contains("1200000 characters") == true)
        let longDescription = String(repeating: "é", count: 256)
        #expect(
            try issues(["parameters": ["p": ["defaultValue": ["value": "x"], "description": .string(longDescription)]]])
                .isEmpty
        )

        let relaxed = ValidationOptions(maximumParameters: 5000)
        #expect(try errors(["parameters": .object(parameters)], options: relaxed).isEmpty)
    }

    @Test func allowedValues() throws {
        let found = try errors([
            "parameters": [
                "variant": [
                    "defaultValue": ["value": "control"],
                    "conditionalValues": ["c": ["value": "purple"]],
                    "vane": ["allowedValues": ["control", "one_page"]],
                ]
            ],
            "conditions": [["name": "c", "expression": "true"]],
        ])
        #expect(found == ["parameters.variant.conditionalValues.c.value": "allowed-values"])
    }

    @Test(arguments: [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...",
        "-----BEGIN PRIVATE KEY-----",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
        "xoxb-1234567890-abcdefghij",
        "sk_live_abcdefghijklmnop1234",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "https://admin:hunter22@db.example.com/prod",
        "postgres://app:s3cr3t-pa55@10.0.0.5:5432/main",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        #"{"endpoint": "https://api.example.com", "client_secret": "abcd1234efgh5678"}"#,
        // The field names match in any case.
        "DB_PassWord=correct-horse-battery",
    ])
    func refusesValuesThatLookLikeCredentials(secret: String) throws {
        let json: JSONValue = ["parameters": ["config": ["defaultValue": ["value": .string(secret)]]]]
        let all = try issues(json)
        #expect(all.map(\.rule) == ["secret"])
        #expect(all.first?.path.description == "parameters.config.defaultValue.value")
        // The message names the kind of secret but never repeats it.
        #expect(all.first.map { !$0.message.contains(secret) } == true)
        // Allowed per parameter, or everywhere.
        let allowed: JSONValue = [
            "parameters": ["config": ["defaultValue": ["value": .string(secret)], "vane": ["allowSecrets": true]]]
        ]
        #expect(try issues(allowed).isEmpty)
        #expect(try issues(json, options: ValidationOptions(allowSecrets: true)).isEmpty)
    }

    @Test(arguments: [
        "https://example.com/path?x=1", "https://user@example.com", "Welcome back!", "#1A73E8",
        #"{"password_min_length": 8, "token_ttl": 3600}"#, "sk-short",
    ])
    func acceptsOrdinaryValues(value: String) throws {
        #expect(try issues(["parameters": ["p": ["defaultValue": ["value": .string(value)]]]]).isEmpty)
    }

    @Test func warnsAboutParametersWithoutValuesAndStructuredConditionProblems() throws {
        let all = try issues([
            "parameters": ["empty": ["description": "nothing"]],
            "conditions": [["name": "odd", "condition": ["mysteryCondition": [:]]]],
        ])
        #expect(all.allSatisfy { $0.severity == .warning })
        #expect(Set(all.map(\.path.description)).contains("parameters.empty"))
        #expect(all.contains { $0.path.description.hasPrefix("conditions[0].condition") })
    }
}
