import Testing
import VaneAuthoring
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

@Suite(.timeLimit(.minutes(5))) struct ServedTemplateTests {
    /// OFREP's `SPLIT` reason comes from the parsed conditions: no condition is parsed again.
    @Test func percentConditionsComeFromTheParsedForm() throws {
        let template = try ConfigTemplate(json: [
            "conditions": [
                ["name": "country", "expression": "device.country in ['de']"],
                ["name": "either", "expression": "device.os == 'ios' || percent('a') <= 10"],
                ["name": "outside", "expression": "!(percent('b') between 10 and 20)"],
                [
                    "name": "tree",
                    "condition": [
                        "andCondition": [
                            "conditions": [["percent": ["percentOperator": "LESS_OR_EQUAL", "microPercent": 5]]]
                        ]
                    ],
                ],
                ["name": "always", "condition": ["true": [:]]],
            ],
            "parameters": ["p": ["defaultValue": ["value": "x"]]],
        ])
        let parsed = ParsedTemplate(template)
        let served = ServedTemplate(
            environment: EnvironmentKey(projectId: "app", environmentId: "prod"),
            number: 1,
            parsed: parsed,
            compiled: try CompiledTemplate(parsed),
            templateJSON: template.serialized(.compact)
        )
        #expect(served.percentConditions == ["either", "outside", "tree"])
        #expect(served.percentConditions == Set(parsed.conditions.filter(\.containsPercent).map(\.name)))
    }
}
