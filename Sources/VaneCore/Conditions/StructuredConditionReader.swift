import Foundation

/// A malformed or unknown part of a server template condition, found while reading it.
///
/// Reading never fails: each such part reads the way Firebase's Node Admin SDK evaluates it
/// (usually as `false`), and an issue records it so validation can warn.
public struct StructuredConditionIssue: Sendable, Equatable, CustomStringConvertible {
    /// The JSON path of the part, relative to the condition, such as
    /// `orCondition.conditions[0].percent.percentOperator`; empty for the condition itself.
    public var path: JSONPath
    /// What is wrong and how it reads.
    public var message: String

    /// Creates an issue.
    public init(path: JSONPath, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, or the message alone at the top.
    public var description: String { path.components.isEmpty ? message : "\(path): \(message)" }
}

/// Reads a server template's structured condition (a `OneOfCondition`) into a
/// ``ConditionExpression``, with the Node Admin SDK's semantics.
///
/// * The first present (JavaScript-truthy) field of `orCondition`, `andCondition`, `true`,
///   `false`, `percent`, `customSignal` wins; none is `false`.
/// * An empty or missing `orCondition.conditions` is `false`; an empty `andCondition` is `true`.
/// * Depth starts at 0 and grows by 2 per `orCondition`/`andCondition` level; a node reached at
///   depth ``maximumDepth`` or more is `false`. Four nested combinators work; an atom under five
///   is `false`.
/// * `percent` without an operator is `false`, an unknown operator is `.unknown(name)`, a
///   missing bound is 0 and a missing seed is empty.
/// * `customSignal` without operator, key or targets (or with no targets) is `false`; unknown
///   operators are `false`.
public enum StructuredConditionReader {
    /// The depth at which Firebase stops evaluating and reads `false`.
    public static let maximumDepth = 10

    /// Reads a condition; never throws, whatever the JSON.
    public static func read(
        _ json: JSONValue
    ) -> (expression: ConditionExpression, issues: [StructuredConditionIssue]) {
        var reader = Reader()
        let expression = reader.condition(json, path: .root, depth: 0)
        return (expression, reader.issues)
    }
}

private let conditionKinds = ["orCondition", "andCondition", "true", "false", "percent", "customSignal"]

private struct Reader {
    var issues: [StructuredConditionIssue] = []

    mutating func condition(_ json: JSONValue, path: JSONPath, depth: Int) -> ConditionExpression {
        guard depth < StructuredConditionReader.maximumDepth else {
            note(path, "nested deeper than Firebase evaluates (more than 4 AND/OR levels), so it is false")
            return .constant(false)
        }
        guard case .object(let object) = json else {
            note(path, "expected a condition object, found \(json.kindDescription); it is false")
            return .constant(false)
        }
        for key in object.keys where !conditionKinds.contains(key) {
            note(path.appending(key), "unknown field, ignored")
        }
        let present = conditionKinds.filter { object[$0].map(isTruthy) ?? false }
        guard let kind = present.first, let value = object[kind] else {
            note(path, "no orCondition, andCondition, true, false, percent or customSignal; it is false")
            return .constant(false)
        }
        for ignored in present.dropFirst() {
            note(path.appending(ignored), "ignored: Firebase reads only the first of \(kind) and \(ignored)")
        }
        let valuePath = path.appending(kind)
        switch kind {
        case "orCondition": return combinator(value, path: valuePath, depth: depth, isAnd: false)
        case "andCondition": return combinator(value, path: valuePath, depth: depth, isAnd: true)
        case "true": return .constant(true)
        case "false": return .constant(false)
        case "percent": return percent(value, path: valuePath)
        default: return customSignal(value, path: valuePath)
        }
    }

    /// `{conditions: [...]}`; children sit two levels deeper, as Node counts.
    private mutating func combinator(_ json: JSONValue, path: JSONPath, depth: Int, isAnd: Bool) -> ConditionExpression
    {
        let empty = ConditionExpression.constant(isAnd)
        let emptyMessage = "no conditions: an empty \(isAnd ? "AND is true" : "OR is false")"
        guard case .object(let object) = json else {
            note(path, "expected an object with a conditions array, found \(json.kindDescription); \(emptyMessage)")
            return empty
        }
        guard let conditions = object["conditions"], isTruthy(conditions) else {
            note(path.appending("conditions"), emptyMessage)
            return empty
        }
        guard case .array(let children) = conditions else {
            note(path.appending("conditions"), "expected an array, found \(conditions.kindDescription); it is false")
            return .constant(false)
        }
        guard !children.isEmpty else {
            note(path.appending("conditions"), emptyMessage)
            return empty
        }
        let operands = children.enumerated().map { index, child in
            condition(child, path: path.appending("conditions").appending(index), depth: depth + 2)
        }
        return isAnd ? .and(operands) : .or(operands)
    }

    // MARK: Percent

    private mutating func percent(_ json: JSONValue, path: JSONPath) -> ConditionExpression {
        guard case .object(let object) = json else {
            note(path, "expected an object, found \(json.kindDescription); it is false")
            return .constant(false)
        }
        let operatorPath = path.appending("percentOperator")
        guard let operatorValue = object["percentOperator"], isTruthy(operatorValue) else {
            note(operatorPath, "missing, so the condition is false")
            return .constant(false)
        }
        guard case .string(let name) = operatorValue else {
            note(operatorPath, "expected a string, found \(operatorValue.kindDescription); the condition is false")
            return .constant(false)
        }
        let seed = percentSeed(object["seed"], path: path.appending("seed"))
        let range: PercentRange?
        switch name {
        case "LESS_OR_EQUAL":
            range = micros(object["microPercent"], path: path.appending("microPercent")).map { .lessOrEqual($0) }
        case "GREATER_THAN":
            range = micros(object["microPercent"], path: path.appending("microPercent")).map { .greaterThan($0) }
        case "BETWEEN":
            range = betweenRange(object["microPercentRange"], path: path.appending("microPercentRange"))
        default:
            note(operatorPath, "unknown operator \"\(name)\", never true")
            range = .unknown(name)
        }
        guard let range else { return .constant(false) }
        return .percent(PercentCondition(seed: seed, range: range))
    }

    private mutating func percentSeed(_ json: JSONValue?, path: JSONPath) -> String {
        switch json {
        case nil, .null?: return ""
        case .string(let seed)?: return seed
        case let other?:
            note(path, "expected a string, found \(other.kindDescription); read as no seed")
            return ""
        }
    }

    private mutating func betweenRange(_ json: JSONValue?, path: JSONPath) -> PercentRange? {
        guard let json, isTruthy(json) else {
            note(path, "missing, so both bounds are 0 and the condition is never true")
            return .between(lower: 0, upper: 0)
        }
        guard case .object(let object) = json else {
            note(path, "expected an object, found \(json.kindDescription); both bounds are 0")
            return .between(lower: 0, upper: 0)
        }
        guard let lower = micros(object["microPercentLowerBound"], path: path.appending("microPercentLowerBound")),
            let upper = micros(object["microPercentUpperBound"], path: path.appending("microPercentUpperBound"))
        else { return nil }
        return .between(lower: lower, upper: upper)
    }

    /// A micro-percent field read as Node's `value || 0` compares it; nil when JavaScript's
    /// comparison would be NaN (never true).
    private mutating func micros(_ json: JSONValue?, path: JSONPath) -> Double? {
        let value: Double?
        switch json {
        case nil, .null?:
            note(path, "missing, read as 0")
            return 0
        case .number(let number)?:
            value = number.value
        case .bool(let bool)?:
            note(path, "expected a number, found a Boolean; read as \(bool ? 1 : 0)")
            value = bool ? 1 : 0
        case .string(let text)?:
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            value = trimmed.isEmpty ? 0 : Double(trimmed)
            note(path, value == nil ? "not a number, so the condition is false" : "a number written as a string")
        case let other?:
            note(path, "expected a number, found \(other.kindDescription); the condition is false")
            return nil
        }
        if let value, !(value == value.rounded() && (0...100_000_000).contains(value)) {
            note(path, "expected a whole number of micro-percents from 0 to 100000000")
        }
        return value
    }

    // MARK: Custom signals

    private mutating func customSignal(_ json: JSONValue, path: JSONPath) -> ConditionExpression {
        guard case .object(let object) = json else {
            note(path, "expected an object, found \(json.kindDescription); it is false")
            return .constant(false)
        }
        let operatorName = requiredString(object["customSignalOperator"], path: path.appending("customSignalOperator"))
        let key = requiredString(object["customSignalKey"], path: path.appending("customSignalKey"))
        let targets = targetValues(object["targetCustomSignalValues"], path: path.appending("targetCustomSignalValues"))
        guard let operatorName, let key, let targets, let first = targets.first else { return .constant(false) }
        guard let test = customSignalTest(operatorName, targets: targets, first: first) else {
            note(
                path.appending("customSignalOperator"),
                "unknown operator \"\(operatorName)\", so the condition is false"
            )
            return .constant(false)
        }
        return .attribute(AttributeCondition(subject: .customSignal(key), test: test))
    }

    private func customSignalTest(_ name: String, targets: [String], first: String) -> AttributeTest? {
        let comparisons: [String: ComparisonOperator] = [
            "LESS_THAN": .lessThan, "LESS_EQUAL": .lessOrEqual, "EQUAL": .equal, "NOT_EQUAL": .notEqual,
            "GREATER_THAN": .greaterThan, "GREATER_EQUAL": .greaterOrEqual,
        ]
        let strings: [String: StringOperator] = [
            "STRING_CONTAINS": .contains, "STRING_DOES_NOT_CONTAIN": .notContains,
            "STRING_EXACTLY_MATCHES": .exactlyMatches, "STRING_CONTAINS_REGEX": .matches,
        ]
        if let method = strings[name] { return .string(method, targets) }
        for (prefix, isVersion) in [("NUMERIC_", false), ("SEMANTIC_VERSION_", true)] where name.hasPrefix(prefix) {
            guard let comparison = comparisons[String(name.dropFirst(prefix.count))] else { return nil }
            return isVersion ? .version(comparison, first) : .number(comparison, first)
        }
        return nil
    }

    /// A non-empty string field; nil (the condition is false) otherwise.
    private mutating func requiredString(_ json: JSONValue?, path: JSONPath) -> String? {
        switch json {
        case .string(let value)? where !value.isEmpty: return value
        case nil, .null?, .string?: note(path, "missing, so the condition is false")
        case let other?: note(path, "expected a string, found \(other.kindDescription); the condition is false")
        }
        return nil
    }

    /// The target list; nil (the condition is false) when missing, empty or not a list.
    private mutating func targetValues(_ json: JSONValue?, path: JSONPath) -> [String]? {
        guard let json, isTruthy(json) else {
            note(path, "missing, so the condition is false")
            return nil
        }
        guard case .array(let elements) = json else {
            note(path, "expected an array of strings, found \(json.kindDescription); the condition is false")
            return nil
        }
        guard !elements.isEmpty else {
            note(path, "empty, so the condition is false")
            return nil
        }
        var targets: [String] = []
        for (index, element) in elements.enumerated() {
            switch element {
            case .string(let value):
                targets.append(value)
            case .number(let number):
                note(path.appending(index), "expected a string, found a number; read as its text")
                targets.append(number.intValue.map(String.init) ?? number.text)
            case .bool(let bool):
                note(path.appending(index), "expected a string, found a Boolean; read as its text")
                targets.append(bool ? "true" : "false")
            default:
                note(
                    path.appending(index),
                    "expected a string, found \(element.kindDescription); the condition is false"
                )
                return nil
            }
        }
        return targets
    }

    // MARK: Helpers

    private mutating func note(_ path: JSONPath, _ message: String) {
        issues.append(StructuredConditionIssue(path: path, message: message))
    }

    /// JavaScript truthiness, which decides whether Node sees a field as present.
    private func isTruthy(_ json: JSONValue) -> Bool {
        switch json {
        case .null: return false
        case .bool(let bool): return bool
        case .number(let number): return number.value != 0 && !number.value.isNaN
        case .string(let string): return !string.isEmpty
        case .array, .object: return true
        }
    }
}
