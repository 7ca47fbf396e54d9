import Testing

@testable import VaneAuthoring
@testable import VaneCore

/// Shadowed conditional values and unused conditions: what must be reported and what must not.
@Suite struct ShadowedValueTests {
    /// A template with the conditions in order and one parameter `flag` with a value for each.
    func template(_ conditions: [(String, String)], flagUses names: [String]? = nil) -> ConfigTemplate {
        ConfigTemplate(
            conditions: conditions.map { TemplateCondition(name: $0.0, expression: $0.1) },
            parameters: [
                TemplateParameter(
                    key: "flag",
                    defaultValue: .value("everyone"),
                    conditionalValues: (names ?? conditions.map(\.0)).map {
                        ConditionalValue(conditionName: $0, value: .value($0))
                    }
                )
            ]
        )
    }

    func shadowed(_ conditions: [(String, String)], flagUses names: [String]? = nil) -> [ShadowedValue] {
        ParsedTemplate(template(conditions, flagUses: names)).shadowedValues()
    }

    @Test func aNarrowerConditionBelowABroaderOneIsShadowed() {
        let found = shadowed([
            ("germany_austria", "device.country in ['de', 'at']"),
            ("germany_app_2_1", "device.country in ['DE'] && app.version.>=(['2.1'])"),
        ])
        #expect(
            found == [ShadowedValue(parameterKey: "flag", condition: "germany_app_2_1", shadowedBy: "germany_austria")]
        )
        #expect(found.first?.message.contains("Move germany_app_2_1 above germany_austria") == true)
    }

    @Test(arguments: [
        ("app.version.>=(['2.0'])", "app.version.>=(['2.1.3'])"),
        ("app.version.>(['2.0'])", "app.version.==(['2.0.1'])"),
        ("percent between 10 and 50", "percent between 20 and 30"),
        ("percent <= 50", "percent <= 20 && device.os == 'ios'"),
        ("app.customSignal['age'] >= 18", "app.customSignal['age'] > 21"),
        ("app.audiences.inAtLeastOne(['a', 'b'])", "app.audiences.inAtLeastOne(['a'])"),
        ("device.os == 'ios' || device.os == 'android'", "device.os == 'IOS' && app.build.>=(['5'])"),
        ("device.os == 'ios'", "device.os == 'ios'"),
        ("true", "device.language in ['de']"),
    ])
    func provedImplicationsAreReported(broad: String, narrow: String) {
        let found = shadowed([("broad", broad), ("narrow", narrow)])
        #expect(found.map(\.condition) == ["narrow"], "\(broad) should shadow \(narrow)")
    }

    @Test(arguments: [
        // Only part of the narrower one's users.
        ("device.country in ['de']", "device.country in ['de', 'at']"),
        ("app.version.>=(['2.2'])", "app.version.>=(['2.1'])"),
        ("app.version.>(['2.1'])", "app.version.>=(['2.1'])"),
        ("percent between 10 and 50", "percent between 5 and 30"),
        // Another seed buckets users differently.
        ("percent('a') <= 50", "percent('b') <= 20"),
        // Another attribute, or the same name read elsewhere.
        ("app.customSignal['country'] >= 1", "app.userProperty['country'] >= 2"),
        // Not provable: negation, string methods, a non-numeric version, a language's regions.
        ("device.os != 'web'", "device.os == 'ios'"),
        ("app.customSignal['plan'].contains(['pro'])", "app.customSignal['plan'].exactlyMatches(['pro'])"),
        ("app.version.>=(['2.x'])", "app.version.>=(['3.0'])"),
        ("device.language in ['de']", "device.language in ['de-AT']"),
        ("device.os == 'ios' && device.country in ['de']", "device.os == 'ios'"),
    ])
    func unprovedOrFalseImplicationsAreNotReported(broad: String, narrow: String) {
        #expect(shadowed([("broad", broad), ("narrow", narrow)]).isEmpty, "\(broad) must not shadow \(narrow)")
    }

    @Test func theOrderDecides() {
        // The broad one below the narrow one: both decide for someone.
        #expect(
            shadowed([("narrow", "device.country in ['de']"), ("broad", "device.country in ['de', 'at']")]).isEmpty
        )
    }

    @Test func aConditionTheFlagDoesNotUseShadowsNothing() {
        let found = shadowed(
            [("broad", "device.country in ['de', 'at']"), ("narrow", "device.country in ['de']")],
            flagUses: ["narrow"]
        )
        #expect(found.isEmpty)
    }

    @Test func validationWarnsAtTheShadowedValueAndNamesBoth() {
        let issues = template([
            ("germany_austria", "device.country in ['de', 'at']"),
            ("germany_app_2_1", "device.country in ['de'] && app.version.>=(['2.1'])"),
        ])
        .validate()
        let issue = issues.first { $0.rule == "shadowed-value" }
        #expect(issue?.severity == .warning)
        #expect(issue?.path.description == "parameters.flag.conditionalValues.germany_app_2_1")
        #expect(issue?.message.contains("germany_austria") == true)
    }

    @Test func validationWarnsAboutAConditionNoParameterUses() {
        let issues = template(
            [("used", "device.os == 'ios'"), ("forgotten", "device.os == 'android'")],
            flagUses: ["used"]
        )
        .validate()
        let unused = issues.filter { $0.rule == "unused-condition" }
        #expect(unused.map(\.path.description) == ["conditions[1].name"])
        #expect(unused.first?.severity == .warning)
        #expect(unused.first?.message.contains("\"forgotten\"") == true)
    }

    @Test func movingAConditionAboveAnotherEndsTheShadow() throws {
        let before = template([
            ("germany_austria", "device.country in ['de', 'at']"),
            ("other", "device.os == 'ios'"),
            ("germany_app_2_1", "device.country in ['de'] && app.version.>=(['2.1'])"),
        ])
        let moved = try #require(before.movingCondition("germany_app_2_1", above: "germany_austria"))
        #expect(moved.conditions.map(\.name) == ["germany_app_2_1", "germany_austria", "other"])
        #expect(ParsedTemplate(moved).shadowedValues().isEmpty)
        #expect(moved.movingCondition("germany_app_2_1", above: "other") == nil)
        #expect(moved.movingCondition("missing", above: "other") == nil)
    }
}
