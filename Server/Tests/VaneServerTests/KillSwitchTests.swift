import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The kill switch of a Boolean flag: off for everyone, and back as it was.
@Suite struct KillSwitchTests {
    static let template = ConfigTemplate(
        conditions: [
            TemplateCondition(name: "beta", expression: "app.userProperty['beta'] == 'yes'"),
            TemplateCondition(name: "gone", expression: "device.country in ['fr']"),
        ],
        parameters: []
    )

    static func flag(_ value: String, beta: String? = nil) -> TemplateParameter {
        TemplateParameter(
            key: "new_checkout",
            defaultValue: .value(value),
            conditionalValues: beta.map { [ConditionalValue(conditionName: "beta", value: .value($0))] } ?? [],
            valueType: .boolean
        )
    }

    @Test func offMakesEveryValueFalse() {
        let on = Self.flag("false", beta: "true")
        #expect(KillSwitch.isOn(on))
        #expect(KillSwitch.trueCount(on) == (1, 2))
        let off = KillSwitch.switchedOff(on)
        #expect(!KillSwitch.isOn(off))
        #expect(off.conditionalValue(for: "beta")?.stringValue == "false")
        #expect(off.defaultValue?.stringValue == "false")
    }

    @Test func onRestoresTheNewestEarlierFormThatWasOn() {
        var older = Self.flag("false", beta: "true")
        older.conditionalValues.append(ConditionalValue(conditionName: "removed_since", value: .value("true")))
        let earlier = [Self.flag("false", beta: "false"), older, Self.flag("true")]
        var current = KillSwitch.switchedOff(older)
        current.description = "now with a description"
        let restored = KillSwitch.switchedOn(current, earlier: earlier, in: Self.template)
        #expect(restored.defaultValue?.stringValue == "false")
        #expect(restored.conditionalValues == [ConditionalValue(conditionName: "beta", value: .value("true"))])
        #expect(restored.description == "now with a description")
        // Never on before: true for everyone else.
        #expect(
            KillSwitch.switchedOn(Self.flag("false"), earlier: [], in: Self.template).defaultValue?.stringValue
                == "true"
        )
    }

    @Test func replacingFindsParametersInGroups() throws {
        var template = Self.template
        template.parameterGroups = [ParameterGroup(name: "g", parameters: [Self.flag("true")])]
        let replaced = try #require(TemplateEdits.replacing(Self.flag("false"), in: template))
        #expect(replaced.parameterGroups[0].parameters[0].defaultValue?.stringValue == "false")
        #expect(TemplateEdits.replacing(TemplateParameter(key: "missing"), in: template) == nil)
    }

    @Test func formsAndPaths() {
        #expect(ConsoleForm.parse("a=1&b=two+words&c=%C3%A9&d&a=2") == ["a": "2", "b": "two words", "c": "é", "d": ""])
        #expect(ConsoleForm.parse("bad=%ZZ") == ["bad": "%ZZ"])
        #expect(ConsolePaths.encode("a b/é") == "a%20b%2F%C3%A9")
        #expect(ConsolePaths.sameOriginPath("/projects") == "/projects")
        #expect(ConsolePaths.sameOriginPath("/a\nb") == "/ab")
        for unsafe in ["//evil.example", "/\\evil.example", "https://evil.example", "projects"] {
            #expect(ConsolePaths.sameOriginPath(unsafe) == nil, "\(unsafe)")
        }
    }
}
