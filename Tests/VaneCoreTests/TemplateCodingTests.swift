import Testing

@testable import VaneAuthoring
@testable import VaneCore

@Suite struct TemplateCodingTests {
    @Test(arguments: ["client-template.json", "server-template.json"])
    func roundTripsLosslessly(fixture: String) throws {
        let original = try JSONValue.parse(Fixtures.data(fixture))
        let template = try ConfigTemplate(json: original)
        let written = template.json()
        #expect(canonical(written) == canonical(original))
        // Writing what was read again changes nothing, not even member order.
        #expect(try ConfigTemplate(json: written).json() == written)
        #expect(try ConfigTemplate(data: Array(template.serialized().utf8)) == template)
    }

    @Test func keepsParameterOrderAndManagedValues() throws {
        let template = try Fixtures.template("client-template.json")
        #expect(template.parameters.map(\.key) == ["welcome", "checkout_enabled", "layout", "legacy_flag"])
        #expect(template.allParameters.map(\.key).last == "price_tier")
        let checkout = try #require(template.parameter(forKey: "checkout_enabled"))
        #expect(checkout.conditionalValue(for: "in_20_percent")?.kind == .managed("rolloutValue"))
        #expect(checkout.metadata?.realtime == true)
        #expect(checkout.metadata?.allowedValues == ["true", "false"])
        let legacy = try #require(template.parameter(forKey: "legacy_flag"))
        #expect(legacy.defaultValue?.kind == .useInAppDefault)
        #expect(legacy.conditionalValue(for: "beta_build")?.kind == .managed("experimentValue"))
        #expect(
            template.parameter(forKey: "price_tier")?.conditionalValue(for: "pro_users")?.kind
                == .managed("personalizationValue")
        )
    }

    @Test func keepsUnknownEnumStringsAndFields() throws {
        let template = try Fixtures.template("client-template.json")
        #expect(template.version?.updateOrigin?.rawValue == "ADMIN_SDK_PYTHON")
        #expect(template.conditions[1].tagColor == "SOME_FUTURE_COLOR")
        #expect(template.unknownFields["etag"] == "etag-123456789012-42")
        #expect(template.parameter(forKey: "layout")?.unknownFields["futureField"] != nil)
        let written = template.serialized(.compact)
        #expect(written.contains(#""kept":[1,2.50,3e2]"#))
    }

    @Test func readsServerTemplates() throws {
        let template = try Fixtures.template("server-template.json")
        #expect(template.isServerTemplate)
        #expect(template.conditions.map(\.name) == ["new_app_and_10pct", "premium", "everyone"])
        #expect(template.version?.updateTime == "2024-01-02T03:04:05.123456789Z")
        #expect(template.version?.updateType == .forcedUpdate)
    }

    @Test func acceptsNumericVersionNumbersAndWritesThemAsStrings() throws {
        let template = try ConfigTemplate(json: ["parameters": [:], "version": ["versionNumber": 12]])
        #expect(template.version?.versionNumber == "12")
        #expect(template.json().objectValue?["version"]?.objectValue?["versionNumber"] == "12")
    }

    @Test func reportsEveryMalformedFieldWithItsPath() throws {
        let json: JSONValue = [
            "conditions": [
                ["name": "a", "expression": 5],
                ["expression": "true"],
                ["name": "c"],
            ],
            "parameters": [
                "ok": ["defaultValue": ["value": "1"]],
                "number_value": ["defaultValue": ["value": 42]],
                "bad_flag": ["defaultValue": ["useInAppDefault": false]],
                "not_object": "x",
                "empty_value": ["conditionalValues": ["a": [:]]],
                "bad_description": ["description": ["x"], "vane": ["realtime": "yes"]],
            ],
            "version": ["versionNumber": "twelve"],
        ]
        #expect {
            try ConfigTemplate(json: json)
        } throws: { error in
            guard let error = error as? DocumentError else { return false }
            let paths = Set(error.issues.map(\.path.description))
            let expected: Set<String> = [
                "conditions[0].expression", "conditions[1].name", "conditions[2]",
                "parameters.number_value.defaultValue.value", "parameters.bad_flag.defaultValue.useInAppDefault",
                "parameters.not_object", "parameters.empty_value.conditionalValues.a",
                "parameters.bad_description.description", "parameters.bad_description.vane.realtime",
                "version.versionNumber",
            ]
            return paths == expected
                && error.issues.contains { $0.message.contains(#"expected a string, found a number (write "42")"#) }
        }
    }

    @Test func reportsMalformedJSONWithLineAndColumn() {
        #expect {
            try ConfigTemplate(
                data: Array("{\n  \"parameters\": {\n    \"a\": {\"defaultValue\": {\"value\": \"x\"}\n  }\n".utf8)
            )
        } throws: { error in
            guard let issue = (error as? DocumentError)?.issues.first else { return false }
            return issue.rule == "json-syntax" && issue.message.hasPrefix("line 5, column 1:")
        }
    }

    @Test func rejectsADocumentThatIsNotAnObject() {
        #expect(throws: DocumentError.self) { try ConfigTemplate(json: ["not", "a", "template"]) }
    }

    @Test func readsLargeTemplates() throws {
        var parameters = JSONObject()
        for index in 0..<3000 { parameters["key_\(index)"] = ["defaultValue": ["value": .string("value \(index)")]] }
        let template = try ConfigTemplate(json: .object(["parameters": .object(parameters)]))
        #expect(template.parameters.count == 3000)
        #expect(template.parameters[2999].key == "key_2999")
    }
}
