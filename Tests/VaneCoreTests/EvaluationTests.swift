import Foundation
import Testing

@testable import VaneCore

@Suite struct EvaluationTests {
    /// Firebase's own example: `fruit` with `is_ios` before `is_in_20_percent` in template order.
    func fruitTemplate(
        conditionalOrder: [String] = ["is_in_20_percent", "is_ios"],
        defaultValue: ParameterValue? = .value("pear")
    )
        -> ConfigTemplate
    {
        let values: [String: String] = ["is_ios": "apple", "is_in_20_percent": "banana"]
        return ConfigTemplate(
            conditions: [
                TemplateCondition(name: "is_ios", expression: "device.os == 'ios'"),
                TemplateCondition(name: "is_in_20_percent", expression: "percent <= 20"),
            ],
            parameters: [
                TemplateParameter(
                    key: "fruit",
                    defaultValue: defaultValue,
                    conditionalValues: conditionalOrder.map {
                        ConditionalValue(conditionName: $0, value: .value(values[$0] ?? ""))
                    }
                )
            ]
        )
    }

    /// An id whose unseeded bucket is below 20 %, and one above.
    func ids() -> (inside: String, outside: String) {
        var inside: String?
        var outside: String?
        for index in 0..<1000 where inside == nil || outside == nil {
            let id = "user-\(index)"
            if PercentBucket.microPercentile(seed: "", randomizationId: id) <= 20_000_000 {
                inside = inside ?? id
            } else {
                outside = outside ?? id
            }
        }
        return (inside ?? "", outside ?? "")
    }

    @Test(arguments: [["is_in_20_percent", "is_ios"], ["is_ios", "is_in_20_percent"]])
    func firstTrueConditionInTemplateOrderWins(order: [String]) throws {
        let compiled = try CompiledTemplate(fruitTemplate(conditionalOrder: order))
        let (inside, outside) = ids()
        let iosInside = compiled.evaluate(EvaluationContext(randomizationId: inside, attributes: ["device.os": "ios"]))
        #expect(iosInside["fruit"]?.stringValue == "apple")
        #expect(iosInside.resolution(forKey: "fruit")?.matchedCondition == "is_ios")
        let androidInside = compiled.evaluate(
            EvaluationContext(randomizationId: inside, attributes: ["device.os": "android"])
        )
        #expect(androidInside["fruit"]?.stringValue == "banana")
        let androidOutside = compiled.evaluate(
            EvaluationContext(randomizationId: outside, attributes: ["device.os": "android"])
        )
        #expect(androidOutside["fruit"]?.stringValue == "pear")
        #expect(androidOutside.resolution(forKey: "fruit")?.matchedCondition == nil)
        #expect(androidOutside.resolution(forKey: "fruit")?.outcome == .value("pear"))
    }

    @Test func noDefaultAndNoMatchLeavesTheKeyOut() throws {
        let compiled = try CompiledTemplate(fruitTemplate(defaultValue: nil))
        let result = compiled.evaluate(
            EvaluationContext(randomizationId: ids().outside, attributes: ["device.os": "web"])
        )
        #expect(result["fruit"] == nil)
        #expect(result.entries.isEmpty)
        #expect(result.resolution(forKey: "fruit")?.outcome == .noDefaultValue)
    }

    @Test func useInAppDefaultLeavesTheKeyOutWithoutFallingThrough() throws {
        var template = fruitTemplate()
        template.parameters[0].conditionalValues[1].value = .useInAppDefault  // is_ios
        let result = try CompiledTemplate(template).evaluate(EvaluationContext(attributes: ["device.os": "ios"]))
        #expect(result["fruit"] == nil)
        #expect(
            result.resolution(forKey: "fruit")
                == ParameterResolution(key: "fruit", outcome: .useInAppDefault, matchedCondition: "is_ios")
        )
        #expect(result.string(forKey: "fruit", default: "app default") == "app default")
    }

    @Test func managedValuesActLikeUseInAppDefault() throws {
        let template = try Fixtures.template("client-template.json")
        let compiled = try CompiledTemplate(template)
        let pro = compiled.evaluate(EvaluationContext(randomizationId: "x", attributes: ["plan": "pro"]))
        // price_tier: pro_users → personalizationValue, so no value at all (no fall-through to "2").
        #expect(pro["price_tier"] == nil)
        #expect(pro.resolution(forKey: "price_tier")?.outcome == .managed("personalizationValue"))
        // legacy_flag's default is useInAppDefault.
        #expect(pro.resolution(forKey: "legacy_flag")?.outcome == .useInAppDefault)
        #expect(!pro.values.keys.contains("legacy_flag"))
    }

    @Test func percentRulesAreFalseWithoutARandomizationId() throws {
        let compiled = try CompiledTemplate(fruitTemplate())
        for id in [nil, ""] as [String?] {
            let result = compiled.evaluate(EvaluationContext(randomizationId: id, attributes: [:]))
            #expect(result["fruit"]?.stringValue == "pear")
        }
    }

    @Test func missingAttributesMakeEveryRuleFalseEvenNegatedOnes() throws {
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(name: "not_ios", expression: "device.os != 'ios'"),
                TemplateCondition(name: "no_beta", expression: "app.version.notContains(['beta'])"),
                TemplateCondition(name: "negated", expression: "!(device.os == 'ios')"),
            ],
            parameters: [
                TemplateParameter(
                    key: "a",
                    defaultValue: .value("default"),
                    conditionalValues: [ConditionalValue(conditionName: "not_ios", value: .value("x"))]
                ),
                TemplateParameter(
                    key: "b",
                    defaultValue: .value("default"),
                    conditionalValues: [ConditionalValue(conditionName: "no_beta", value: .value("x"))]
                ),
                TemplateParameter(
                    key: "c",
                    defaultValue: .value("default"),
                    conditionalValues: [ConditionalValue(conditionName: "negated", value: .value("x"))]
                ),
            ]
        )
        let result = try CompiledTemplate(template).evaluate(EvaluationContext())
        #expect(result["a"]?.stringValue == "default")
        #expect(result["b"]?.stringValue == "default")
        // Vane's `!` negates the whole rule, so a missing attribute makes it true.
        #expect(result["c"]?.stringValue == "x")
    }

    @Test func dateTimeUsesTheEvaluationTimeUnlessTheContextPinsIt() throws {
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(
                    name: "after_launch",
                    expression: "dateTime >= dateTime('2030-01-01T00:00:00', 'UTC')"
                )
            ],
            parameters: [
                TemplateParameter(
                    key: "launched",
                    defaultValue: .value("false"),
                    conditionalValues: [ConditionalValue(conditionName: "after_launch", value: .value("true"))]
                )
            ]
        )
        let compiled = try CompiledTemplate(template)
        let launch = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01T00:00:00Z
        #expect(
            compiled.evaluate(EvaluationContext(), at: launch.addingTimeInterval(-1)).bool(
                forKey: "launched",
                default: true
            )
                == false
        )
        #expect(compiled.evaluate(EvaluationContext(), at: launch).bool(forKey: "launched", default: false) == true)
        let pinned = EvaluationContext(attributes: ["dateTime": .date(launch.addingTimeInterval(3600))])
        #expect(
            compiled.evaluate(pinned, at: launch.addingTimeInterval(-86_400)).bool(forKey: "launched", default: false)
                == true
        )
        let pinnedText = EvaluationContext(attributes: ["dateTime": "2029-12-31T23:00:00Z"])
        #expect(compiled.evaluate(pinnedText, at: launch).bool(forKey: "launched", default: true) == false)
    }

    @Test func resultUnchangedUntilTheNextDateTimeBoundary() throws {
        let launch = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01T00:00:00Z
        let end = launch.addingTimeInterval(86_400)
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(
                    name: "sale",
                    expression:
                        "dateTime >= dateTime('2030-01-01T00:00:00', 'UTC') && dateTime < dateTime('2030-01-02T00:00:00', 'UTC')"
                ),
                TemplateCondition(name: "german", expression: "device.country in ['de']"),
            ],
            parameters: [
                TemplateParameter(
                    key: "banner",
                    defaultValue: .value("none"),
                    conditionalValues: [ConditionalValue(conditionName: "sale", value: .value("sale"))]
                )
            ]
        )
        let compiled = try CompiledTemplate(template)
        let user = EvaluationContext(attributes: ["device.country": "de"])
        // Before, during and after the sale: each result holds until the next edge, then for good.
        #expect(compiled.resultUnchangedUntil(for: user, evaluatedAt: launch.addingTimeInterval(-60)) == launch)
        #expect(compiled.resultUnchangedUntil(for: user, evaluatedAt: launch) == launch)
        #expect(compiled.resultUnchangedUntil(for: user, evaluatedAt: launch.addingTimeInterval(1)) == end)
        #expect(compiled.resultUnchangedUntil(for: user, evaluatedAt: end.addingTimeInterval(1)) == .distantFuture)
        // A context that pins dateTime never changes with time.
        let pinned = EvaluationContext(attributes: ["dateTime": .date(launch)])
        #expect(
            compiled.resultUnchangedUntil(for: pinned, evaluatedAt: launch.addingTimeInterval(-60)) == .distantFuture
        )

        let timeless = try CompiledTemplate(ConfigTemplate(conditions: [template.conditions[1]], parameters: []))
        #expect(timeless.resultUnchangedUntil(for: EvaluationContext(), evaluatedAt: launch) == .distantFuture)
        // A rule that reads the clock as text (a custom signal named like it) can change at any moment.
        let textual = try CompiledTemplate(
            ConfigTemplate(
                conditions: [
                    template.conditions[0],
                    TemplateCondition(name: "odd", expression: "app.customSignal['dateTime'].contains(['1'])"),
                ],
                parameters: []
            )
        )
        #expect(textual.resultUnchangedUntil(for: EvaluationContext(), evaluatedAt: launch) == launch)
    }

    @Test func installationIdDefaultsToTheRandomizationId() throws {
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(name: "qa_devices", expression: "app.firebaseInstallationId in ['device-qa-1']")
            ],
            parameters: [
                TemplateParameter(
                    key: "debug_menu",
                    defaultValue: .value("false"),
                    conditionalValues: [ConditionalValue(conditionName: "qa_devices", value: .value("true"))]
                )
            ]
        )
        let compiled = try CompiledTemplate(template)
        #expect(
            compiled.evaluate(EvaluationContext(randomizationId: "device-qa-1")).bool(
                forKey: "debug_menu",
                default: false
            )
        )
        #expect(
            !compiled.evaluate(EvaluationContext(randomizationId: "device-2")).bool(
                forKey: "debug_menu",
                default: false
            )
        )
        let explicit = EvaluationContext(
            randomizationId: "device-2",
            attributes: ["app.firebaseInstallationId": "device-qa-1"]
        )
        #expect(compiled.evaluate(explicit).bool(forKey: "debug_menu", default: false))
    }

    @Test func conditionalValuesForUnknownConditionsAreIgnored() throws {
        let template = ConfigTemplate(
            parameters: [
                TemplateParameter(
                    key: "a",
                    defaultValue: .value("1"),
                    conditionalValues: [ConditionalValue(conditionName: "ghost", value: .value("2"))]
                )
            ]
        )
        #expect(try CompiledTemplate(template).evaluate(EvaluationContext())["a"]?.stringValue == "1")
    }

    @Test func compilationListsEveryBrokenCondition() {
        let template = ConfigTemplate(
            conditions: [
                TemplateCondition(name: "ok", expression: "true"),
                TemplateCondition(name: "broken", expression: "device.os == ios"),
                TemplateCondition(name: "also_broken", expression: "app.version >= '2.0'"),
            ]
        )
        #expect {
            try CompiledTemplate(template)
        } throws: { error in
            let issues = (error as? TemplateCompilationError)?.issues ?? []
            return issues.map(\.path.description) == ["conditions[1].expression", "conditions[2].expression"]
                && issues[0].message.contains("broken")
        }
    }

    @Test func serverTemplatesEvaluateWithNodeSemantics() throws {
        let compiled = try CompiledTemplate(Fixtures.template("server-template.json"))
        // "everyone" is last in template order, "premium" first among max_items' conditions.
        #expect(
            compiled.evaluate(EvaluationContext(attributes: ["tier": " premium "])).int(forKey: "max_items", default: 0)
                == 100
        )
        #expect(
            compiled.evaluate(EvaluationContext(attributes: ["tier": "free"])).int(forKey: "max_items", default: 0)
                == 20
        )
        // checkout: 10 % by seed checkout_v2 AND app_version >= 2.4.0.
        var inBucket: String?
        for index in 0..<1000 where inBucket == nil {
            let id = "id-\(index)"
            if PercentBucket.microPercentile(seed: "checkout_v2", randomizationId: id) <= 10_000_000 { inBucket = id }
        }
        let id = try #require(inBucket)
        #expect(
            compiled.evaluate(EvaluationContext(randomizationId: id, attributes: ["app_version": "2.4.1"])).bool(
                forKey: "checkout_v2_enabled",
                default: false
            )
        )
        #expect(
            !compiled.evaluate(EvaluationContext(randomizationId: id, attributes: ["app_version": "2.3.9"])).bool(
                forKey: "checkout_v2_enabled",
                default: true
            )
        )
    }

    @Test func entriesAreExactlyWhatAClientReceivesInTemplateOrder() throws {
        let compiled = try CompiledTemplate(Fixtures.template("client-template.json"))
        let result = compiled.evaluate(
            EvaluationContext(randomizationId: "someone", attributes: ["device.os": "android"])
        )
        let keys = result.entries.map(\.key)
        #expect(keys.starts(with: ["welcome", "checkout_enabled", "layout"]))
        #expect(!keys.contains("legacy_flag"))
        #expect(result.values["layout"] == #"{"columns":2,"sections":["hero","list"]}"#)
    }

    @Test func evaluatesConcurrentlyWithTheSameResults() async throws {
        let compiled = try CompiledTemplate(Fixtures.template("client-template.json"))
        let contexts = (0..<200).map {
            EvaluationContext(
                randomizationId: "user-\($0)",
                attributes: ["device.os": $0 % 2 == 0 ? "ios" : "android", "device.country": "us"]
            )
        }
        let expected = contexts.map { compiled.evaluate($0).values }
        let results = await withTaskGroup(of: (Int, [String: String]).self) { group in
            for (index, context) in contexts.enumerated() {
                group.addTask { (index, compiled.evaluate(context).values) }
            }
            var results = [[String: String]](repeating: [:], count: contexts.count)
            for await (index, values) in group { results[index] = values }
            return results
        }
        #expect(results == expected)
    }
}

@Suite struct CoercionTests {
    @Test(arguments: ["1", "true", "TRUE", "t", "T", "yes", "Yes", "y", "on", "ON", " true "])
    func trueWords(text: String) {
        #expect(CoercedValue(text).boolValue == true)
    }

    @Test(arguments: ["0", "false", "False", "f", "no", "NO", "n", "off", "Off", "", "  "])
    func falseWords(text: String) {
        #expect(CoercedValue(text).boolValue == false)
    }

    /// The reading compares packed bytes (issue #32); the published word lists must agree with it.
    @Test func everyPublishedWordReadsAsItsValue() {
        for word in ValueCoercion.trueWords { #expect(ValueCoercion.bool(word) == true, "\(word)") }
        for word in ValueCoercion.falseWords { #expect(ValueCoercion.bool(word) == false, "\(word)") }
    }

    @Test(arguments: ["2", "-1", "truthy", "enabled", "yes please", "1.0", "nope"])
    func otherTextIsNotABoolean(text: String) {
        #expect(CoercedValue(text).boolValue == nil)
    }

    @Test func numbersAndIntegers() {
        #expect(CoercedValue("42").intValue == 42)
        #expect(CoercedValue(" -7 ").intValue == -7)
        #expect(CoercedValue("2.0").intValue == 2)
        #expect(CoercedValue("1e3").intValue == 1000)
        #expect(CoercedValue("1.5").intValue == nil)
        #expect(CoercedValue("1.5").doubleValue == 1.5)
        #expect(CoercedValue(".5").doubleValue == 0.5)
        #expect(CoercedValue("+3").doubleValue == 3)
        for text in ["0x10", "NaN", "Infinity", "1_000", "1,000", "5px", "", "1e400"] {
            #expect(CoercedValue(text).doubleValue == nil, "\(text)")
            #expect(CoercedValue(text).intValue == nil, "\(text)")
        }
        #expect(CoercedValue("99999999999999999999").intValue == nil)
    }

    @Test func aMismatchReturnsTheCallersDefault() throws {
        let template = ConfigTemplate(parameters: [
            TemplateParameter(key: "flag", defaultValue: .value("maybe")),
            TemplateParameter(key: "count", defaultValue: .value("lots")),
        ])
        let result = try CompiledTemplate(template).evaluate(EvaluationContext())
        #expect(result.bool(forKey: "flag", default: true) == true)
        #expect(result.bool(forKey: "flag", default: false) == false)
        #expect(result.int(forKey: "count", default: 7) == 7)
        #expect(result.double(forKey: "count", default: 0.5) == 0.5)
        #expect(result.string(forKey: "count", default: "x") == "lots")
        #expect(result.bool(forKey: "absent", default: true) == true)
    }

    @Test func decodesJSONValues() throws {
        struct Layout: Decodable, Equatable {
            let columns: Int
            let sections: [String]
        }
        let value = CoercedValue(#"{"columns":2,"sections":["hero","list"]}"#)
        #expect(try value.decode(Layout.self) == Layout(columns: 2, sections: ["hero", "list"]))
        #expect(throws: DecodingError.self) { try CoercedValue("not json").decode(Layout.self) }
    }
}
