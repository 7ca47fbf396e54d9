import Foundation
import Testing

@testable import VaneAuthoring
@testable import VaneCore

/// `ParsedTemplate` parses each condition once for validation and compilation; these tests pin
/// that its answers are the ones validation and compilation gave when each parsed on its own.
@Suite struct ParsedTemplateTests {
    /// A template with every kind of condition problem: syntax, names, structure, references.
    static let troubled: JSONValue = [
        "conditions": [
            ["name": "ios", "expression": "device.os == 'ios'"],
            ["name": "broken", "expression": "device.os == ios"],
            ["name": "", "expression": "true"],
            ["name": "ios", "expression": "percent('a') <= 10"],
            ["name": "odd_tree", "condition": ["percent": ["percentOperator": "SIDEWAYS"]]],
            ["name": "deep_split", "condition": ["andCondition": ["conditions": [["percent": ["seed": "s"]]]]]],
        ],
        "parameters": [
            "greeting": [
                "defaultValue": ["value": "hi"],
                "conditionalValues": ["ios": ["value": "hey"], "ghost": ["value": "boo"]],
            ]
        ],
    ]

    /// A template that compiles, with both condition forms and a percent rule in each.
    static let mixed: JSONValue = [
        "conditions": [
            ["name": "ios_or_split", "expression": "device.os == 'ios' || percent('x') between 10 and 60"],
            ["name": "not_de", "expression": "!(device.country in ['de'])"],
            [
                "name": "split_tree",
                "condition": [
                    "orCondition": [
                        "conditions": [
                            [
                                "percent": [
                                    "percentOperator": "LESS_OR_EQUAL", "seed": "y", "microPercent": 40_000_000,
                                ]
                            ]
                        ]
                    ]
                ],
            ],
        ],
        "parameters": [
            "a": [
                "defaultValue": ["value": "0"],
                "conditionalValues": ["ios_or_split": ["value": "1"], "not_de": ["value": "2"]],
            ],
            "b": ["defaultValue": ["value": "x"], "conditionalValues": ["split_tree": ["value": "y"]]],
        ],
    ]

    static func templates() throws -> [(name: String, template: ConfigTemplate)] {
        [
            ("client", try Fixtures.template("client-template.json")),
            ("server", try Fixtures.template("server-template.json")),
            ("troubled", try ConfigTemplate(json: troubled)),
            ("mixed", try ConfigTemplate(json: mixed)),
        ]
    }

    /// Contexts that reach every condition of the templates above.
    static let contexts: [EvaluationContext] = (0..<64).map { index in
        EvaluationContext(
            randomizationId: index % 16 == 0 ? nil : "user-\(index)",
            attributes: [
                "device.os": index % 2 == 0 ? "ios" : "android",
                "device.country": index % 3 == 0 ? "de" : "us",
                "app.version": index % 4 == 0 ? "2.1.0-beta" : "1.9.0",
                "app.build": index % 5 == 0 ? "130" : "90",
                "plan": index % 6 == 0 ? "pro" : "free",
                "tier": index % 7 == 0 ? "premium" : "free",
                "app_version": index % 2 == 1 ? "2.4.1" : "2.3.0",
            ]
        )
    }

    /// Every validation issue of a template, one line each.
    static func issueLines(_ issues: [ValidationIssue]) -> [String] { issues.map(\.description) }

    /// Every resolution for every context, or the compilation error, hashed: one line per template.
    static func compiledDigest(_ compile: () throws -> CompiledTemplate) -> String {
        let text: String
        do {
            let compiled = try compile()
            let now = Date(timeIntervalSince1970: 1_750_000_000)
            text = contexts.map { "\(compiled.evaluate($0, at: now).resolutions)" }.joined(separator: "\n")
        } catch {
            text = "error: \(error)"
        }
        // FNV-1a: enough to tell texts apart, and the tests need no hashing library.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\(text.utf8.count):" + String(hash, radix: 16)
    }

    /// What `ConfigTemplate.validate()` and `CompiledTemplate(_:)` answered before they shared a
    /// `ParsedTemplate` (captured at commit 116702f), per template, with the `unused-condition`
    /// warnings validation reports since.
    static let golden: [String: (issues: [String], compiled: String)] = [
        "client": ([], "42849:c003633e3a7d00a9"),
        "server": ([], "17112:f432cb2a94f8ec91"),
        "troubled": (
            [
                #"error: conditions[1].expression: condition "broken", column 14: expected a string in single quotes, found "ios""#,
                "error: conditions[2].name: the condition name is empty; give it a unique name",
                #"error: conditions[3].name: duplicate condition name "ios" (also conditions[0]); names must be unique"#,
                #"warning: conditions[4].condition.percent.percentOperator: unknown operator "SIDEWAYS", never true"#,
                "warning: conditions[5].condition.andCondition.conditions[0].percent.percentOperator: missing, so the condition is false",
                #"error: parameters.greeting.conditionalValues.ghost: no condition is named "ghost"; add it to conditions or remove this value"#,
                #"warning: conditions[1].name: no parameter has a value for the condition "broken" any more; delete it, or give a parameter a value for it"#,
                #"warning: conditions[4].name: no parameter has a value for the condition "odd_tree" any more; delete it, or give a parameter a value for it"#,
                #"warning: conditions[5].name: no parameter has a value for the condition "deep_split" any more; delete it, or give a parameter a value for it"#,
            ],
            "118:bb284424d483b14a"
        ),
        "mixed": ([], "15742:9497b8940661e509"),
    ]

    @Test func validationIsWhatItWas() throws {
        for (name, template) in try Self.templates() {
            let expected = try #require(Self.golden[name]).issues
            #expect(Self.issueLines(ParsedTemplate(template).validate()) == expected, "\(name)")
            #expect(Self.issueLines(template.validate()) == expected, "\(name)")
        }
    }

    @Test func compilationIsWhatItWas() throws {
        for (name, template) in try Self.templates() {
            let expected = try #require(Self.golden[name]).compiled
            #expect(Self.compiledDigest { try CompiledTemplate(ParsedTemplate(template)) } == expected, "\(name)")
            #expect(Self.compiledDigest { try CompiledTemplate(template) } == expected, "\(name)")
        }
    }

    @Test func conditionsAreParsedAsTheParsersParseThem() throws {
        for (_, template) in try Self.templates() {
            let parsed = ParsedTemplate(template)
            #expect(parsed.conditions.count == template.conditions.count)
            for (condition, result) in zip(template.conditions, parsed.conditions) {
                #expect(result.name == condition.name)
                switch condition.source {
                case .expression(let text):
                    do {
                        let expression = try ConditionParser.parse(text, conditionName: condition.name)
                        #expect(result.expression == expression && result.syntaxError == nil)
                    } catch {
                        #expect(result.expression == nil && result.syntaxError == error)
                    }
                    #expect(result.structuredIssues.isEmpty)
                case .structured(let json):
                    let read = StructuredConditionReader.read(json)
                    #expect(result.expression == read.expression && result.structuredIssues == read.issues)
                    #expect(result.syntaxError == nil)
                }
            }
        }
    }

    @Test func percentRulesAreFoundAtAnyDepth() throws {
        let parsed = ParsedTemplate(try ConfigTemplate(json: Self.mixed))
        #expect(parsed.conditions.map(\.containsPercent) == [true, false, true])
        let troubled = ParsedTemplate(try ConfigTemplate(json: Self.troubled))
        // A condition that does not parse has no rules at all; a percent rule without an
        // operator reads as `false`, so it is no split either.
        #expect(troubled.conditions.map(\.containsPercent) == [false, false, false, true, true, false])
    }

    @Test func aVersionStampKeepsTheCompiledTables() throws {
        let template = try Fixtures.template("client-template.json")
        let compiled = try CompiledTemplate(ParsedTemplate(template))
        let stamped = compiled.replacingVersion(TemplateVersion(versionNumber: "12"))
        #expect(stamped.versionNumber == "12")
        #expect(stamped.template.parameters == compiled.template.parameters)
        #expect(Self.compiledDigest { stamped } == Self.compiledDigest { compiled })
    }

    /// Reusing an earlier parse gives exactly what parsing afresh gives: the same conditions,
    /// the same problems, whether a condition kept, changed, renamed, added or broke.
    @Test func reusingAnEarlierParseGivesWhatAFreshParseGives() throws {
        let earlier = try ConfigTemplate(json: Self.troubled)
        var edited = earlier
        edited.conditions[0].source = .expression("device.os == 'android'")  // changed
        edited.conditions[3].name = "ios_split"  // renamed: a duplicate name no more
        edited.conditions.append(TemplateCondition(name: "fresh", expression: "device.country in ['de'"))
        edited.conditions.swapAt(1, 4)
        let reused = ParsedTemplate(edited, reusing: ParsedTemplate(earlier))
        let fresh = ParsedTemplate(edited)
        #expect(reused.conditions == fresh.conditions)
        #expect(reused.validate() == fresh.validate())
        #expect(fresh.conditions.last?.syntaxError != nil)
    }
}
