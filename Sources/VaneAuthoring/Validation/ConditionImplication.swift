public import VaneCore

/// Whether one condition is true for every context another is true for, proved from the
/// conditions' rules alone.
///
/// Only what can be proved is claimed: both sides are read as an OR of ANDs of rules (a single
/// rule is an AND of one), and `narrow ⇒ broad` holds when every AND of `narrow` implies some AND
/// of `broad`, and an AND implies another when each rule of the other is implied by one of its
/// own. One rule implies another on the same attribute for `==`/`in` lists (a subset), version
/// and number comparisons (a contained range, numeric targets only), audiences (`inAtLeastOne` of
/// a subset) and `percent` ranges of the same seed. Anything else — negations, string methods,
/// dates, nested OR inside AND — proves nothing, so `implies` answers false, never a guess.
public enum ConditionImplication {
    /// Whether every context `narrow` matches is also matched by `broad`, as far as can be proved.
    public static func implies(_ narrow: ConditionExpression, _ broad: ConditionExpression) -> Bool {
        guard let narrowTerms = terms(of: narrow), let broadTerms = terms(of: broad) else {
            return narrow == broad
        }
        return narrowTerms.allSatisfy { conjunction in
            broadTerms.contains { implies(conjunction: conjunction, $0) }
        }
    }

    /// `expression` as an OR of ANDs of plain rules, or nil when it is not of that shape.
    static func terms(of expression: ConditionExpression) -> [[ConditionExpression]]? {
        switch expression {
        case .or(let operands):
            var result: [[ConditionExpression]] = []
            for operand in operands {
                guard let conjunction = conjunction(of: operand) else { return nil }
                result.append(conjunction)
            }
            return result
        case .constant(false):
            return []
        default:
            return conjunction(of: expression).map { [$0] }
        }
    }

    /// `expression` as an AND of plain rules (nested ANDs flattened), or nil.
    static func conjunction(of expression: ConditionExpression) -> [ConditionExpression]? {
        switch expression {
        case .and(let operands):
            var rules: [ConditionExpression] = []
            for operand in operands {
                guard let inner = conjunction(of: operand) else { return nil }
                rules += inner
            }
            return rules
        case .constant(true):
            return []
        case .attribute, .percent, .not:
            return [expression]
        case .or(let operands) where operands.count == 1:
            return conjunction(of: operands[0])
        case .or, .constant(false):
            return nil
        }
    }

    /// Whether the AND `narrow` implies the AND `broad`: each rule of `broad` follows from a rule
    /// of `narrow` (an empty `broad` is always true).
    static func implies(conjunction narrow: [ConditionExpression], _ broad: [ConditionExpression]) -> Bool {
        broad.allSatisfy { rule in narrow.contains { implies(rule: $0, rule) } }
    }

    /// Whether the rule `narrow` implies the rule `broad`.
    static func implies(rule narrow: ConditionExpression, _ broad: ConditionExpression) -> Bool {
        if narrow == broad { return true }
        switch (narrow, broad) {
        case (.percent(let inner), .percent(let outer)):
            guard inner.seed == outer.seed, let small = interval(inner.range), let large = interval(outer.range)
            else { return false }
            return large.lower <= small.lower && small.upper <= large.upper
        case (.attribute(let inner), .attribute(let outer)):
            // The same attribute read the same way: a missing attribute makes both false.
            guard inner.subject == outer.subject else { return false }
            return implies(test: inner.test, outer.test)
        default:
            return false
        }
    }

    /// A percent range as (lower exclusive, upper inclusive) micro-percents.
    static func interval(_ range: PercentRange) -> (lower: Double, upper: Double)? {
        switch range {
        case .lessOrEqual(let upper): return (-1, upper)
        case .greaterThan(let lower): return (lower, Double.infinity)
        case .between(let lower, let upper): return (lower, upper)
        case .unknown: return nil
        }
    }

    static func implies(test narrow: AttributeTest, _ broad: AttributeTest) -> Bool {
        switch (narrow, broad) {
        case (.equals, _), (.inList, _):
            guard let small = targets(of: narrow), let large = targets(of: broad), small.matching == large.matching
            else { return false }
            let normalized = Set(large.values.map { normalize($0, small.matching) })
            return small.values.allSatisfy { normalized.contains(normalize($0, small.matching)) }
        case (.version(let innerOperator, let innerTarget), .version(let outerOperator, let outerTarget)):
            guard let inner = Version(innerTarget), let outer = Version(outerTarget) else { return false }
            return implies(innerOperator, inner, outerOperator, outer, compare: Version.compare)
        case (.number(let innerOperator, let innerTarget), .number(let outerOperator, let outerTarget)):
            guard let inner = plainNumber(innerTarget), let outer = plainNumber(outerTarget) else { return false }
            return implies(innerOperator, inner, outerOperator, outer) { $0 < $1 ? -1 : ($0 > $1 ? 1 : 0) }
        case (.audience(.inAtLeastOne, let inner), .audience(.inAtLeastOne, let outer)):
            return Set(inner).isSubset(of: Set(outer))
        case (.audience(.inAll, let inner), .audience(.inAll, let outer)):
            return Set(outer).isSubset(of: Set(inner))
        default:
            return false
        }
    }

    /// The strings an `==` or `in` rule accepts; nil for `!=` and other tests.
    static func targets(of test: AttributeTest) -> (values: [String], matching: StringMatching)? {
        switch test {
        case .equals(let value, negated: false, let matching): return ([value], matching)
        case .inList(let values, let matching): return (values, matching)
        default: return nil
        }
    }

    /// A target as its matching compares it. A language tag without a region also matches every
    /// region, so tags are only compared whole (lower case, `_` as `-`): equal tags match alike.
    static func normalize(_ value: String, _ matching: StringMatching) -> String {
        switch matching {
        case .exact: return value
        case .caseInsensitive: return value.lowercased()
        case .languageTag: return String(value.lowercased().map { $0 == "_" ? "-" : $0 })
        }
    }

    /// Whether `x narrowOp a` implies `x broadOp b` for every `x` that compares, given how `a`
    /// and `b` compare. `!=` never proves or is proved (it is false for values that do not compare).
    static func implies<Target>(
        _ narrowOperator: ComparisonOperator,
        _ narrow: Target,
        _ broadOperator: ComparisonOperator,
        _ broad: Target,
        compare: (Target, Target) -> Int
    ) -> Bool {
        let ordering = compare(narrow, broad)
        switch (narrowOperator, broadOperator) {
        case (.equal, .notEqual), (.notEqual, _), (_, .notEqual):
            return false
        case (.equal, _):
            return broadOperator.holds(forOrdering: ordering)
        case (.greaterOrEqual, .greaterOrEqual), (.greaterThan, .greaterThan), (.greaterThan, .greaterOrEqual):
            return ordering >= 0
        case (.greaterOrEqual, .greaterThan):
            return ordering > 0
        case (.lessOrEqual, .lessOrEqual), (.lessThan, .lessThan), (.lessThan, .lessOrEqual):
            return ordering <= 0
        case (.lessOrEqual, .lessThan):
            return ordering < 0
        default:
            return false
        }
    }

    /// A number target written as plain decimal digits (`-0.5`, `42`): its JavaScript value is the
    /// obvious one. Other spellings (hex, exponents, white space) prove nothing.
    static func plainNumber(_ text: String) -> Double? {
        var digits = text[...]
        if digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            digits.filter({ $0 == "." }).count <= 1, digits.first != ".", digits.last != "."
        else { return nil }
        return Double(text)
    }

    /// A version target whose segments are all plain numbers (at most five, as the engine reads
    /// them): compared segment by segment, missing segments 0.
    struct Version {
        let segments: [Double]

        init?(_ text: String) {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count <= 5 else { return nil }
            var segments: [Double] = []
            for part in parts {
                guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Double(part) else {
                    return nil
                }
                segments.append(value)
            }
            self.segments = segments
        }

        static func compare(_ lhs: Version, _ rhs: Version) -> Int {
            for index in 0..<5 {
                let left = index < lhs.segments.count ? lhs.segments[index] : 0
                let right = index < rhs.segments.count ? rhs.segments[index] : 0
                if left < right { return -1 }
                if left > right { return 1 }
            }
            return 0
        }
    }
}
