import Testing

@testable import VaneAuthoring
@testable import VaneCore

/// One plain sentence per change, for every kind of change a diff names.
@Suite struct ChangeSentenceTests {
    func sentences(_ old: ConfigTemplate, _ new: ConfigTemplate) -> [String] {
        TemplateDiff(from: old, to: new).sentences(from: old, to: new).map(\.description)
    }

    let germany = TemplateCondition(name: "germany_app_2_1", expression: "device.country in ['de']")
    let ios = TemplateCondition(name: "ios", expression: "device.os == 'ios'")

    @Test func aNewConditionalValueReadsAsInsteadOfNone() {
        let old = ConfigTemplate(
            conditions: [germany],
            parameters: [TemplateParameter(key: "banner_text", defaultValue: .value("Hello"))]
        )
        var new = old
        new.parameters[0].conditionalValues = [
            ConditionalValue(conditionName: "germany_app_2_1", value: .value("Frühling!"))
        ]
        #expect(sentences(old, new) == ["banner_text: for germany_app_2_1, 'Frühling!' instead of none"])
    }

    @Test func everyFieldOfAChangedParameterHasItsSentence() {
        let old = ConfigTemplate(
            conditions: [germany, ios],
            parameters: [
                TemplateParameter(
                    key: "limit",
                    defaultValue: .value("1"),
                    conditionalValues: [ConditionalValue(conditionName: "ios", value: .value("2"))],
                    description: "old",
                    valueType: .string
                )
            ]
        )
        var new = old
        new.parameters[0].defaultValue = .useInAppDefault
        new.parameters[0].conditionalValues = [ConditionalValue(conditionName: "germany_app_2_1", value: .value("3"))]
        new.parameters[0].valueType = .number
        new.parameters[0].description = "new"
        new.parameters[0].metadata = ParameterMetadata(title: "Limit", allowedValues: ["1", "3"], realtime: true)
        #expect(
            sentences(old, new) == [
                "limit: for everyone else, the app's own default instead of '1'",
                "limit: for germany_app_2_1, '3' instead of none",
                "limit: for ios, none instead of '2'",
                "limit: type NUMBER instead of STRING",
                "limit: description 'new' instead of 'old'",
                "limit: title 'Limit' instead of none",
                "limit: allowed values '1', '3' instead of any",
                "limit: realtime now",
            ]
        )
    }

    @Test func jsonValuesAreCompactedAndLongOnesShortened() {
        let old = ConfigTemplate(parameters: [
            TemplateParameter(key: "layout", defaultValue: .value("{\n  \"a\": 1\n}"))
        ])
        var new = old
        new.parameters[0].defaultValue = .value(String(repeating: "x", count: 200))
        let sentence = sentences(old, new)
        #expect(sentence.count == 1)
        #expect(sentence.first?.hasSuffix("instead of '{\"a\":1}'") == true)
        #expect(sentence.first?.contains("x…'") == true)
    }

    @Test func addedAndRemovedParameters() {
        let old = ConfigTemplate(
            conditions: [ios],
            parameters: [TemplateParameter(key: "gone", defaultValue: .value("bye"))]
        )
        let new = ConfigTemplate(
            conditions: [ios],
            parameters: [
                TemplateParameter(
                    key: "fresh",
                    defaultValue: .value("false"),
                    conditionalValues: [ConditionalValue(conditionName: "ios", value: .value("true"))]
                )
            ]
        )
        #expect(
            sentences(old, new) == [
                "fresh: added, 'false' for everyone else",
                "fresh: for ios, 'true'",
                "gone: removed, which gave 'bye' to everyone else",
            ]
        )
    }

    @Test func conditionsAddedChangedMovedRecolouredAndRemoved() {
        let android = TemplateCondition(name: "android", expression: "device.os == 'android'")
        let old = ConfigTemplate(conditions: [germany, ios, android])
        var changedIOS = ios
        changedIOS.source = .expression("device.os == 'iOS'")
        var blueAndroid = android
        blueAndroid.tagColor = "BLUE"
        let web = TemplateCondition(name: "web", expression: "device.os == 'web'")
        let new = ConfigTemplate(conditions: [blueAndroid, changedIOS, web])
        #expect(
            sentences(old, new) == [
                "condition web: added at position 3, matching device.os == 'web'",
                "condition android: position 1 instead of 3",
                "condition android: colour BLUE instead of none",
                "condition ios: matches device.os == 'iOS' instead of device.os == 'ios'",
                "condition germany_app_2_1: removed",
            ]
        )
    }
}
