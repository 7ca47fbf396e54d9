import Foundation
import Testing

@testable import VaneCore

/// The flattened condition program (`ConditionProgram`, walked by `ConditionEvaluation`) against
/// a plain recursive reading of the same trees: nesting, short circuits that skip whole subtrees,
/// memoised attributes and buckets, and percent rules without an id.
@Suite struct ConditionProgramTests {
    /// A condition tree, its expression text and the answer it should have.
    indirect enum Tree {
        case constant(Bool)
        case isIOS
        case percent(seed: String, atMost: Int)
        case and([Tree])
        case or([Tree])
        case not(Tree)

        var expression: String {
            switch self {
            case .constant(let value): return value ? "true" : "false"
            case .isIOS: return "device.os == 'ios'"
            case .percent(let seed, let atMost): return "percent('\(seed)') <= \(atMost)"
            case .and(let operands): return "(" + operands.map(\.expression).joined(separator: " && ") + ")"
            case .or(let operands): return "(" + operands.map(\.expression).joined(separator: " || ") + ")"
            case .not(let operand): return "!(\(operand.expression))"
            }
        }

        func holds(os: String?, id: String?) -> Bool {
            switch self {
            case .constant(let value): return value
            case .isIOS: return os == "ios"
            case .percent(let seed, let atMost):
                guard let id, !id.isEmpty else { return false }
                return PercentBucket.microPercentile(seed: seed, randomizationId: id) <= UInt64(atMost) * 1_000_000
            case .and(let operands): return operands.allSatisfy { $0.holds(os: os, id: id) }
            case .or(let operands): return operands.contains { $0.holds(os: os, id: id) }
            case .not(let operand): return !operand.holds(os: os, id: id)
            }
        }

        static func random(depth: Int, using generator: inout some RandomNumberGenerator) -> Tree {
            let leaf = depth == 0 || Int.random(in: 0..<3, using: &generator) == 0
            if leaf {
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: return .constant(Bool.random(using: &generator))
                case 1: return .isIOS
                default:
                    return .percent(
                        seed: ["a", "b", "c"].randomElement(using: &generator) ?? "a",
                        atMost: Int.random(in: 1...99, using: &generator)
                    )
                }
            }
            let operands = (0..<Int.random(in: 2...3, using: &generator)).map { _ in
                random(depth: depth - 1, using: &generator)
            }
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return .and(operands)
            case 1: return .or(operands)
            default: return .not(operands[0])
            }
        }
    }

    @Test func nestedTreesAnswerAsTheirPlainReading() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let trees = (0..<12).map { _ in Tree.random(depth: 4, using: &generator) }
            let template = ConfigTemplate(
                conditions: trees.indices.map { TemplateCondition(name: "c\($0)", expression: trees[$0].expression) },
                parameters: (0..<10).map { key in
                    // Each parameter names a few conditions: the first true one in template order wins.
                    let names = Set((0..<3).map { _ in Int.random(in: 0..<trees.count, using: &generator) })
                    return TemplateParameter(
                        key: "p\(key)",
                        defaultValue: .value("default"),
                        conditionalValues: names.map {
                            ConditionalValue(conditionName: "c\($0)", value: .value("c\($0)"))
                        }
                    )
                }
            )
            let compiled = try CompiledTemplate(template)
            for (os, id) in [("ios", "user-\(round)"), ("android", "user-\(round)"), (nil, nil), ("ios", "")] {
                let context = EvaluationContext(
                    randomizationId: id,
                    attributes: os.map { ["device.os": .string($0)] } ?? [:]
                )
                let result = compiled.evaluate(context)
                for parameter in template.parameters {
                    let winner = parameter.conditionalValues
                        .compactMap { Int($0.conditionName.dropFirst()) }
                        .sorted()
                        .first { trees[$0].holds(os: os, id: id) }
                    let expected = winner.map { "c\($0)" } ?? "default"
                    let description = "\(parameter.key), os \(os ?? "none"), id \(id ?? "none")"
                    #expect(result[parameter.key]?.stringValue == expected, "\(description)")
                    #expect(
                        compiled.value(forKey: parameter.key, context: context)?.stringValue == expected,
                        "\(description), one key"
                    )
                }
            }
        }
    }

    @Test func everyPercentOperatorIsFalseWithoutARandomizationId() throws {
        let expressions = ["percent > 0", "percent('s') > 0", "percent between 0 and 100", "percent <= 100"]
        let template = ConfigTemplate(
            conditions: expressions.indices.map { TemplateCondition(name: "c\($0)", expression: expressions[$0]) },
            parameters: expressions.indices.map { index in
                TemplateParameter(
                    key: "p\(index)",
                    defaultValue: .value("outside"),
                    conditionalValues: [ConditionalValue(conditionName: "c\(index)", value: .value("inside"))]
                )
            }
        )
        let compiled = try CompiledTemplate(template)
        for id in [nil, ""] as [String?] {
            let result = compiled.evaluate(EvaluationContext(randomizationId: id))
            for index in expressions.indices {
                #expect(result["p\(index)"]?.stringValue == "outside", "\(expressions[index]), id \(id ?? "none")")
            }
        }
        let someone = compiled.evaluate(EvaluationContext(randomizationId: "user-1"))
        #expect(someone["p0"]?.stringValue == "inside")
        #expect(someone["p2"]?.stringValue == "inside")
    }

    /// The two bounds a range compiles to answer as the range does, at and around its bounds,
    /// for every operator, infinite and NaN bounds included.
    @Test func percentBoundsAnswerAsTheirRange() {
        let values: [Double] = [
            0, 1, 19_999_999, 20_000_000, 20_000_001, 99_999_999, 100_000_000, .infinity, -.infinity, .nan,
        ]
        var ranges: [PercentRange] = [.unknown("SOMETHING_NEW")]
        for value in values {
            ranges.append(.lessOrEqual(value))
            ranges.append(.greaterThan(value))
            for upper in values { ranges.append(.between(lower: value, upper: upper)) }
        }
        let buckets: [UInt64] = [0, 1, 19_999_999, 20_000_000, 20_000_001, 99_999_999]
        for range in ranges {
            let bounds = PercentBounds(range)
            for bucket in buckets {
                #expect(
                    bounds.contains(microPercentile: bucket) == range.contains(microPercentile: bucket),
                    "\(range), bucket \(bucket)"
                )
            }
        }
    }

    /// A whole evaluation matches the context's attributes to the rules' names in one pass (by
    /// bytes when every name is ASCII); it must find exactly what a `Dictionary` lookup finds:
    /// names equal as strings but not as bytes (a Kelvin sign is a K), names that are not ASCII,
    /// defaults for `dateTime` and `app.firebaseInstallationId`, and contexts with more attributes
    /// than the rules read.
    @Test func attributesAreFoundAsADictionaryLookupFindsThem() throws {
        let launch = Date(timeIntervalSince1970: 1_800_000_000)
        let expressions = [
            "app.customSignal['Key'].exactlyMatches(['x'])",
            "app.customSignal['plan'].exactlyMatches(['pro'])",
            "dateTime >= dateTime('2027-01-01T00:00:00', 'UTC')",
            "app.firebaseInstallationId in ['user-1']",
            "app.customSignal['café'].exactlyMatches(['y'])",
        ]
        let template = { (indices: [Int]) in Self.yesWhere(indices.map { ("p\($0)", expressions[$0]) }) }
        let contexts: [(EvaluationContext, [Bool])] = [
            (
                EvaluationContext(randomizationId: "user-1", attributes: ["\u{212A}ey": "x", "plan": "pro"]),
                [true, true, true, true, false]
            ),
            (
                EvaluationContext(attributes: [
                    "Key": "x", "cafe\u{301}": "y", "dateTime": .date(Date(timeIntervalSince1970: 0)),
                ]),
                [true, false, false, false, true]
            ),
            (
                EvaluationContext(
                    randomizationId: "user-2",
                    attributes: Dictionary(
                        uniqueKeysWithValues: (0..<40).map { ("other_\($0)", AttributeValue.number(Double($0))) }
                    )
                    .merging(["plan": "pro"]) { first, _ in first }
                ),
                [false, true, true, false, false]
            ),
        ]
        // Every name ASCII (the one-pass match by bytes), then with a name that is not.
        for indices in [[0, 1, 2, 3], [0, 1, 2, 3, 4]] {
            let compiled = try CompiledTemplate(template(indices))
            for (context, expected) in contexts {
                let result = compiled.evaluate(context, at: launch)
                for index in indices {
                    let answer = expected[index] ? "yes" : "no"
                    #expect(result["p\(index)"]?.stringValue == answer, "\(expressions[index]), \(context)")
                    #expect(
                        compiled.value(forKey: "p\(index)", context: context, at: launch)?.stringValue == answer,
                        "\(expressions[index]), one key, \(context)"
                    )
                }
            }
        }
    }

    /// An evaluation reads each attribute as a version once and compares that with every version
    /// rule on it: each rule still answers as it does alone, in either order of the rules, for
    /// values that differ early, differ after a segment that is not a number, have too many
    /// segments, or are not strings.
    @Test func versionRulesOnOneAttributeAnswerAsEachDoesAlone() throws {
        let targets = ["2.1", "2.10", "1.x", "1.2.3.4.5", "2", "0"]
        let operators = [">=", "<", "==", "!="]
        var expressions: [String] = []
        for target in targets {
            for op in operators { expressions.append("app.version.\(op)(['\(target)'])") }
            // A second attribute, read as a version of its own.
            expressions.append("app.build.>=(['\(target)'])")
        }
        let values: [AttributeValue] = [
            "2.1", "2.9", "2.10.1", "1.x", "0.x", "3.x", "1.2.3.4.5.6", "", " 2.1 ", .number(2.1), .bool(true),
        ]
        for order in [Array(expressions.indices), expressions.indices.reversed()] {
            let compiled = try CompiledTemplate(Self.yesWhere(order.map { ("p\($0)", expressions[$0]) }))
            for value in values {
                let context = EvaluationContext(attributes: ["app.version": value, "app.build": "2.5"])
                let result = compiled.evaluate(context)
                for (index, expression) in expressions.enumerated() {
                    let alone = try CompiledTemplate(Self.yesWhere([("p", expression)]))
                    #expect(
                        result["p\(index)"]?.stringValue == alone.evaluate(context)["p"]?.stringValue,
                        "\(expression) with \(value)"
                    )
                }
            }
        }
        // The shared reading gives the answers Firebase's comparison gives.
        let compiled = try CompiledTemplate(Self.yesWhere(expressions.map { ($0, $0) }))
        let result = compiled.evaluate(EvaluationContext(attributes: ["app.version": "2.9"]))
        #expect(result["app.version.>=(['2.1'])"]?.stringValue == "yes")
        #expect(result["app.version.<(['2.10'])"]?.stringValue == "yes")
        #expect(result["app.version.==(['1.x'])"]?.stringValue == "no")
        #expect(result["app.version.!=(['1.x'])"]?.stringValue == "yes", "2 > 1 decides before the x")
        #expect(result["app.version.>=(['1.2.3.4.5'])"]?.stringValue == "yes")
        let reachingTheX = compiled.evaluate(EvaluationContext(attributes: ["app.version": "1.5"]))
        #expect(reachingTheX["app.version.==(['1.x'])"]?.stringValue == "no")
        #expect(reachingTheX["app.version.!=(['1.x'])"]?.stringValue == "no", "1.5 and 1.x do not compare")
        #expect(reachingTheX["app.version.<(['2'])"]?.stringValue == "yes")
    }

    /// A template with one condition per rule, named by the rule's key, and a parameter of the
    /// same key that is "yes" where its condition holds and "no" elsewhere.
    static func yesWhere(_ rules: [(key: String, expression: String)]) -> ConfigTemplate {
        ConfigTemplate(
            conditions: rules.map { TemplateCondition(name: $0.key, expression: $0.expression) },
            parameters: rules.map { rule in
                TemplateParameter(
                    key: rule.key,
                    defaultValue: .value("no"),
                    conditionalValues: [ConditionalValue(conditionName: rule.key, value: .value("yes"))]
                )
            }
        )
    }
}
