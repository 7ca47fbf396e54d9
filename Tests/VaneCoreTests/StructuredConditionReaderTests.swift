import Foundation
import Testing

@testable import VaneAuthoring
@testable import VaneCore

private func number(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }

private func strings(_ values: String...) -> JSONValue { .array(values.map(JSONValue.string)) }

private func signalNode(_ op: String, _ targets: JSONValue, key: String = "k") -> JSONValue {
    .object([
        "customSignal": .object([
            "customSignalOperator": .string(op), "customSignalKey": .string(key), "targetCustomSignalValues": targets,
        ])
    ])
}

private func or(_ conditions: JSONValue...) -> JSONValue {
    .object(["orCondition": .object(["conditions": .array(conditions)])])
}

private func and(_ conditions: JSONValue...) -> JSONValue {
    .object(["andCondition": .object(["conditions": .array(conditions)])])
}

private let trueNode: JSONValue = .object(["true": .object([:])])
private let falseNode: JSONValue = .object(["false": .object([:])])

@Suite struct StructuredConditionReaderTests {
    @Test func standardShape() {
        let json = or(
            and(
                .object([
                    "percent": .object([
                        "percentOperator": .string("BETWEEN"), "seed": .string("checkout_v2"),
                        "microPercentRange": .object([
                            "microPercentLowerBound": number(0), "microPercentUpperBound": number(10_000_000),
                        ]),
                    ])
                ]),
                signalNode("SEMANTIC_VERSION_GREATER_EQUAL", strings("2.4.0"), key: "app_version")
            )
        )
        let (expression, issues) = StructuredConditionReader.read(json)
        let percent = ConditionExpression.percent(
            PercentCondition(seed: "checkout_v2", range: .between(lower: 0, upper: 10_000_000))
        )
        #expect(
            expression
                == .or([.and([percent, rule(.customSignal("app_version"), .version(.greaterOrEqual, "2.4.0"))])])
        )
        #expect(issues.isEmpty)
        #expect(
            expression.expressionText
                == "percent('checkout_v2') between 0 and 10 && version(app.customSignal['app_version']) >= '2.4.0'"
        )
    }

    @Test func firstPresentFieldWins() {
        let json: JSONValue = .object(["false": .object([:]), "true": .object([:]), "percent": .object([:])])
        let (expression, issues) = StructuredConditionReader.read(json)
        #expect(expression == .constant(true))
        #expect(issues.map(\.path.description) == ["false", "percent"])
        // Falsy values are absent, as in JavaScript.
        #expect(
            StructuredConditionReader.read(.object(["true": .null, "false": .object([:])])).expression
                == .constant(false)
        )
        #expect(
            StructuredConditionReader.read(.object(["true": .bool(false), "false": .bool(true)])).expression
                == .constant(false)
        )
        #expect(StructuredConditionReader.read(trueNode).expression == .constant(true))
    }

    @Test func emptyCombinators() {
        #expect(StructuredConditionReader.read(.object(["orCondition": .object([:])])).expression == .constant(false))
        #expect(StructuredConditionReader.read(.object(["andCondition": .object([:])])).expression == .constant(true))
        #expect(StructuredConditionReader.read(or()).expression == .constant(false))
        #expect(StructuredConditionReader.read(and()).expression == .constant(true))
        let (expression, issues) = StructuredConditionReader.read(
            .object(["orCondition": .object(["conditions": .null])])
        )
        #expect(expression == .constant(false))
        #expect(issues.map(\.path.description) == ["orCondition.conditions"])
    }

    @Test func depthRule() {
        // Four nested combinators: the atom sits at depth 8 and works.
        let four = or(and(or(and(trueNode))))
        #expect(StructuredConditionReader.read(four).expression == .or([.and([.or([.and([.constant(true)])])])]))
        #expect(StructuredConditionReader.read(four).issues.isEmpty)
        // Five: the atom sits at depth 10 and is false.
        let five = or(and(or(and(or(trueNode)))))
        let (expression, issues) = StructuredConditionReader.read(five)
        #expect(expression == .or([.and([.or([.and([.or([.constant(false)])])])])]))
        #expect(
            issues.map(\.path.description) == [
                "orCondition.conditions[0].andCondition.conditions[0].orCondition.conditions[0]"
                    + ".andCondition.conditions[0].orCondition.conditions[0]"
            ]
        )
        // An empty AND at depth 8 evaluates no children, so it stays true.
        #expect(
            StructuredConditionReader.read(or(and(or(and(and()))))).expression
                == .or([.and([.or([.and([.constant(true)])])])])
        )
    }

    @Test func percentRules() {
        func read(_ fields: JSONObject) -> (ConditionExpression, [String]) {
            let result = StructuredConditionReader.read(.object(["percent": .object(fields)]))
            return (result.expression, result.issues.map(\.path.description))
        }
        #expect(
            read(["percentOperator": .string("LESS_OR_EQUAL"), "microPercent": number(20_000_000)]).0
                == .percent(PercentCondition(range: .lessOrEqual(20_000_000)))
        )
        #expect(
            read(["percentOperator": .string("GREATER_THAN"), "microPercent": number(5), "seed": .string("s")]).0
                == .percent(PercentCondition(seed: "s", range: .greaterThan(5)))
        )
        let missingBound = read(["percentOperator": .string("LESS_OR_EQUAL")])
        #expect(missingBound.0 == .percent(PercentCondition(range: .lessOrEqual(0))))
        #expect(missingBound.1 == ["percent.microPercent"])
        #expect(
            read([
                "percentOperator": .string("BETWEEN"),
                "microPercentRange": .object(["microPercentUpperBound": number(7)]),
            ]).0 == .percent(PercentCondition(range: .between(lower: 0, upper: 7)))
        )
        let missingOperator = read(["microPercent": number(5)])
        #expect(missingOperator.0 == .constant(false))
        #expect(missingOperator.1 == ["percent.percentOperator"])
        #expect(
            read(["percentOperator": .string("UNKNOWN")]).0 == .percent(PercentCondition(range: .unknown("UNKNOWN")))
        )
        #expect(
            read(["percentOperator": .string("SOMETIMES")]).0
                == .percent(PercentCondition(range: .unknown("SOMETIMES")))
        )
        #expect(read(["percentOperator": number(3)]).0 == .constant(false))
        #expect(
            read(["percentOperator": .string("LESS_OR_EQUAL"), "microPercent": .string("oops")]).0 == .constant(false)
        )
        #expect(
            read(["percentOperator": .string("LESS_OR_EQUAL"), "microPercent": number(5), "seed": number(1)]).0
                == .percent(PercentCondition(range: .lessOrEqual(5)))
        )
    }

    @Test func customSignalRules() {
        let expectations: [(String, AttributeTest)] = [
            ("NUMERIC_LESS_THAN", .number(.lessThan, "1")), ("NUMERIC_LESS_EQUAL", .number(.lessOrEqual, "1")),
            ("NUMERIC_EQUAL", .number(.equal, "1")), ("NUMERIC_NOT_EQUAL", .number(.notEqual, "1")),
            ("NUMERIC_GREATER_THAN", .number(.greaterThan, "1")),
            ("NUMERIC_GREATER_EQUAL", .number(.greaterOrEqual, "1")),
            ("STRING_CONTAINS", .string(.contains, ["1", "2"])),
            ("STRING_DOES_NOT_CONTAIN", .string(.notContains, ["1", "2"])),
            ("STRING_EXACTLY_MATCHES", .string(.exactlyMatches, ["1", "2"])),
            ("STRING_CONTAINS_REGEX", .string(.matches, ["1", "2"])),
            ("SEMANTIC_VERSION_LESS_THAN", .version(.lessThan, "1")),
            ("SEMANTIC_VERSION_LESS_EQUAL", .version(.lessOrEqual, "1")),
            ("SEMANTIC_VERSION_EQUAL", .version(.equal, "1")), ("SEMANTIC_VERSION_NOT_EQUAL", .version(.notEqual, "1")),
            ("SEMANTIC_VERSION_GREATER_THAN", .version(.greaterThan, "1")),
            ("SEMANTIC_VERSION_GREATER_EQUAL", .version(.greaterOrEqual, "1")),
        ]
        for (name, test) in expectations {
            let result = StructuredConditionReader.read(signalNode(name, strings("1", "2")))
            #expect(result.expression == rule(.customSignal("k"), test), "\(name)")
            #expect(result.issues.isEmpty)
        }
        #expect(
            StructuredConditionReader.read(signalNode("NUMERIC_MOSTLY", strings("1"))).expression == .constant(false)
        )
        #expect(StructuredConditionReader.read(signalNode("UNKNOWN", strings("1"))).expression == .constant(false))
        #expect(StructuredConditionReader.read(signalNode("STRING_CONTAINS", strings())).expression == .constant(false))
        #expect(
            StructuredConditionReader.read(signalNode("STRING_CONTAINS", strings("a"), key: "")).expression
                == .constant(false)
        )
        #expect(
            StructuredConditionReader.read(signalNode("STRING_CONTAINS", .string("a"))).expression == .constant(false)
        )
        let numbers = StructuredConditionReader.read(signalNode("NUMERIC_EQUAL", .array([number(5)])))
        #expect(numbers.expression == rule(.customSignal("k"), .number(.equal, "5")))
        #expect(numbers.issues.map(\.path.description) == ["customSignal.targetCustomSignalValues[0]"])
        let missing = StructuredConditionReader.read(.object(["customSignal": .object([:])]))
        #expect(missing.expression == .constant(false))
        #expect(
            missing.issues.map(\.path.description) == [
                "customSignal.customSignalOperator", "customSignal.customSignalKey",
                "customSignal.targetCustomSignalValues",
            ]
        )
    }

    @Test func malformedShapesNeverCrash() {
        let shapes: [JSONValue] = [
            .null, .bool(true), number(3), .string("orCondition"), .array([trueNode]), .object([:]),
            .object(["mystery": .object([:])]), .object(["orCondition": .string("x")]),
            .object(["andCondition": .array([])]), .object(["orCondition": .object(["conditions": .object([:])])]),
            .object(["orCondition": .object(["conditions": .array([.null, number(1), .string("")])])]),
            .object(["percent": .array([])]), .object(["customSignal": .string("x")]),
            .object(["percent": .object(["percentOperator": .string("BETWEEN"), "microPercentRange": number(4)])]),
        ]
        for shape in shapes {
            let (expression, issues) = StructuredConditionReader.read(shape)
            #expect(!issues.isEmpty, "\(shape) should warn")
            _ = expression.expressionText
        }
        #expect(StructuredConditionReader.read(.object(["andCondition": .string("x")])).expression == .constant(true))
        #expect(
            StructuredConditionReader.read(.object(["orCondition": .object(["conditions": .string("x")])])).expression
                == .constant(false)
        )
        let unknownChild = StructuredConditionReader.read(or(.object(["mystery": .object([:])])))
        #expect(unknownChild.expression == .or([.constant(false)]))
        #expect(
            unknownChild.issues.map(\.path.description) == [
                "orCondition.conditions[0].mystery", "orCondition.conditions[0]",
            ]
        )
    }

    @Test func veryDeepJSONStopsAtTheDepthLimit() {
        var json = trueNode
        for _ in 0..<1_000 { json = or(json) }
        let (expression, issues) = StructuredConditionReader.read(json)
        #expect(issues.count == 1)
        _ = expression
    }
}
