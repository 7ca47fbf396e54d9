import Testing

@testable import VaneAuthoring
@testable import VaneCore

@Suite struct EvaluationContextJSONTests {
    @Test func readsIdAndTypedAttributes() throws {
        let context = try EvaluationContext(json: [
            "targetingKey": "user-1", "app.version": "2.4.0", "seats": 12, "beta": true, "app.audiences": ["a", "b"],
            "gone": .null,
        ])
        #expect(context.randomizationId == "user-1")
        #expect(context["app.version"] == .string("2.4.0"))
        #expect(context["seats"] == .number(12))
        #expect(context["beta"] == .bool(true))
        #expect(context[.appAudiences] == .stringList(["a", "b"]))
        #expect(context["gone"] == nil)
    }

    @Test func reportsUnsupportedMembersWithTheirPaths() {
        #expect {
            try EvaluationContext(json: ["randomizationId": 5, "nested": ["a": 1], "list": ["ok", 2]])
        } throws: { error in
            Set((error as? DocumentError)?.issues.map(\.path.description) ?? []) == [
                "randomizationId", "nested", "list[1]",
            ]
        }
        #expect(throws: DocumentError.self) { try EvaluationContext(json: "user-1") }
    }
}

@Suite struct InAppDefaultsTests {
    @Test func readsTheFlatFormat() throws {
        let defaults = try InAppDefaults(
            data: Array(#"{"welcome": "Hi", "limit": 20, "on": true, "layout": {"a": [1]}, "none": null}"#.utf8)
        )
        #expect(defaults.entries.map(\.key) == ["welcome", "limit", "on", "layout"])
        #expect(defaults["limit"]?.intValue == 20)
        #expect(defaults["on"]?.boolValue == true)
        #expect(defaults["layout"]?.stringValue == #"{"a":[1]}"#)
        #expect(defaults["none"] == nil)
    }

    @Test func readsTheSeedListFormat() throws {
        let defaults = try InAppDefaults(
            data: Array(
                #"[{"name": "welcome", "description": "greeting", "value": "Hi"}, {"name": "n", "value": 3}]"#.utf8
            )
        )
        #expect(
            defaults.entries == [
                InAppDefaults.Entry(key: "welcome", value: "Hi", description: "greeting"),
                InAppDefaults.Entry(key: "n", value: "3"),
            ]
        )
    }

    @Test func reportsBadEntries() {
        #expect {
            try InAppDefaults(data: Array(#"[{"value": "x"}, "loose", {"name": "k"}]"#.utf8))
        } throws: { error in
            (error as? DocumentError)?.issues.map(\.path.description) == ["[0].name", "[1]", "[2].value"]
        }
        #expect(throws: DocumentError.self) { try InAppDefaults(data: Array("42".utf8)) }
        #expect(throws: DocumentError.self) { try InAppDefaults(data: Array("{".utf8)) }
    }

    @Test func templateDefaultsSkipParametersWithoutAStaticDefault() throws {
        let defaults = try Fixtures.template("client-template.json").defaultValues
        #expect(defaults.entries.map(\.key) == ["welcome", "checkout_enabled", "layout", "price_tier"])
        #expect(
            defaults.json() == [
                "welcome": "Hi", "checkout_enabled": "false", "layout": #"{"columns":2,"sections":["hero","list"]}"#,
                "price_tier": "2",
            ]
        )
    }
}

@Suite struct FirebaseTemplateExportTests {
    @Test func dropsVaneMetadataAndRewritesExpressions() throws {
        let template = ConfigTemplate(
            conditions: [TemplateCondition(name: "ios", expression: "(device.os=='ios')&&app.version . >= (['2.0'])")],
            parameters: [
                TemplateParameter(
                    key: "p",
                    defaultValue: .value("x"),
                    conditionalValues: [ConditionalValue(conditionName: "ios", value: .value("y"))],
                    metadata: ParameterMetadata(title: "P", realtime: true)
                )
            ]
        )
        let output = FirebaseExport.export(template)
        #expect(output.isLossless)
        #expect(
            output.template.conditions.first?.source == .expression("device.os == 'ios' && app.version.>=(['2.0'])")
        )
        #expect(output.template.parameters.first?.metadata == nil)
        #expect(output.template.serialized().contains("vane") == false)
    }

    @Test func reportsEveryConditionFirebaseCannotExpress() throws {
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(name: "either", expression: "device.country in ['us'] || device.country in ['ca']"),
                TemplateCondition(name: "fine", expression: "percent <= 10"),
                TemplateCondition(name: "negated", expression: "!(device.os == 'ios')"),
            ],
            parameters: [
                TemplateParameter(
                    key: "p",
                    defaultValue: .value("x"),
                    conditionalValues: [
                        ConditionalValue(conditionName: "either", value: .value("1")),
                        ConditionalValue(conditionName: "fine", value: .value("2")),
                        ConditionalValue(conditionName: "negated", value: .value("3")),
                    ]
                )
            ]
        )
        let output = FirebaseExport.export(template)
        #expect(output.omissions.map(\.path.description) == ["conditions[0].expression", "conditions[2].expression"])
        #expect(output.template.conditions.map(\.name) == ["fine"])
        #expect(output.template.parameters[0].conditionalValues.map(\.conditionName) == ["fine"])
        // What is left is a valid template.
        #expect(!output.template.validate().contains { $0.severity == .error })
    }
}
