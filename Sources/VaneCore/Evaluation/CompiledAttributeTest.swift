import Foundation

/// An ``AttributeTest`` prepared once for fast, repeated evaluation.
///
/// Compiling parses numeric targets, splits version targets, folds and indexes string targets and
/// builds regular expressions, so ``evaluate(_:)`` does no parsing of the rule. Rules work on the
/// value's UTF-8 bytes in place: a string value (or a number value in a numeric rule) allocates
/// nothing, except in `matches`, which hands the text to `NSRegularExpression`.
///
/// Conversions follow Firebase's Node Admin SDK (see ``AttributeValue/javaScriptString`` and
/// ``AttributeValue/javaScriptNumber``). The caller handles a missing attribute, which makes every
/// rule false.
///
/// A class: an evaluation reaches a test through the program's array, and copying a struct out of
/// it retained and released every array and set its rule holds (a fifth of a large evaluation).
final class CompiledAttributeTest: Sendable {
    private let rule: Rule

    /// Compiles a test. A regular expression that does not compile never matches (the parser rejects
    /// such templates before they get here); an empty one matches everything, as in JavaScript.
    init(_ test: AttributeTest) {
        switch test {
        case .equals(let target, let negated, let matching):
            rule = .membership(StringMembership([target], matching: matching), negated: negated)
        case .inList(let targets, let matching):
            rule = .membership(StringMembership(targets, matching: matching), negated: false)
        case .string(let op, let targets):
            rule = Self.compileString(op, targets)
        case .number(let op, let target):
            rule = .number(op, JavaScript.number(from: target))
        case .version(let op, let target):
            rule = .version(op, VersionComparison.Version(target))
        case .audience(let op, let targets):
            rule = .audience(op, Self.deduplicatedBytes(targets))
        case .date(let op, let literal):
            rule = .date(op, literal.date.timeIntervalSince1970)
        }
    }

    /// The instant a date test compares against, in seconds since 1970; nil for other tests.
    var comparedInstant: Double? {
        if case .date(_, let target) = rule { return target }
        return nil
    }

    /// Whether a present attribute value passes the test.
    func evaluate(_ value: AttributeValue) -> Bool {
        var version: VersionComparison.Version?
        return evaluate(value, version: &version)
    }

    /// Whether a present attribute value passes the test; a version test reads `value` as a
    /// version into `version` when it is nil, and compares what is there.
    /// - Parameter version: `value` read as a version, kept by the caller for the next test of
    ///   the same value (``ConditionEvaluation`` keeps one per attribute).
    func evaluate(_ value: AttributeValue, version: inout VersionComparison.Version?) -> Bool {
        switch rule {
        case .membership(let membership, let negated):
            return membership.contains(value) != negated
        case .contains(let needles, let matchesEverything):
            return matchesEverything || Self.containsAny(value, needles)
        case .notContains(let needles, let matchesEverything):
            return !(matchesEverything || Self.containsAny(value, needles))
        case .exactlyMatches(let targets):
            return UTF8Bytes.withJavaScriptString(value) { bytes in
                targets.contains(UnsafeBufferPointer(rebasing: bytes[UTF8Bytes.trimmedRange(bytes)]))
            }
        case .matches(let regexes):
            return Self.matchesAny(value, regexes)
        case .number(let op, let target):
            return Self.compareNumber(value, op, target)
        case .version(let op, let target):
            let reading = version ?? UTF8Bytes.withJavaScriptString(value) { VersionComparison.Version(utf8: $0) }
            version = reading
            guard let ordering = reading.compare(to: target) else { return false }
            return op.holds(forOrdering: ordering)
        case .audience(let op, let targets):
            return Self.evaluateAudience(value, op, targets)
        case .date(let op, let target):
            guard let date = value.dateValue else { return false }
            let seconds = date.timeIntervalSince1970
            return op.holds(forOrdering: seconds < target ? -1 : (seconds > target ? 1 : 0))
        }
    }

    /// The compiled form of each kind of test.
    private enum Rule: Sendable {
        /// `==`, `!=` and `in`.
        case membership(StringMembership, negated: Bool)
        /// `.contains`: UTF-8 needles; true regardless when some target is empty.
        case contains([[UInt8]], matchesEverything: Bool)
        /// `.notContains`: the negation of `.contains`.
        case notContains([[UInt8]], matchesEverything: Bool)
        /// `.exactlyMatches`: the trimmed targets.
        case exactlyMatches(FoldedStringSet)
        /// `.matches`: nil stands for the empty pattern, which matches everything.
        case matches([SendableRegex?])
        /// Numeric comparison against the target's `Number()` (possibly NaN).
        case number(ComparisonOperator, Double)
        /// Version comparison against the pre-split target. Boxed: a version is five numbers
        /// inline, and unboxed it would widen every test's rule past one cache line.
        indirect case version(ComparisonOperator, VersionComparison.Version)
        /// Audience methods over deduplicated UTF-8 targets.
        case audience(AudienceOperator, [[UInt8]])
        /// Date comparison against seconds since 1970.
        case date(ComparisonOperator, Double)
    }

    private static func compileString(_ op: StringOperator, _ targets: [String]) -> Rule {
        switch op {
        case .contains, .notContains:
            let needles = targets.map { Array($0.utf8) }
            let matchesEverything = needles.contains { $0.isEmpty }
            return op == .contains
                ? .contains(needles, matchesEverything: matchesEverything)
                : .notContains(needles, matchesEverything: matchesEverything)
        case .exactlyMatches:
            let trimmed = targets.map(JavaScript.trimmingWhitespace)
            return .exactlyMatches(FoldedStringSet(trimmed, folding: .none))
        case .matches:
            return .matches(targets.compactMap(SendableRegex.compile))
        }
    }

    private static func deduplicatedBytes(_ strings: [String]) -> [[UInt8]] {
        var seen = Set<[UInt8]>()
        return strings.map { Array($0.utf8) }.filter { seen.insert($0).inserted }
    }

    private static func containsAny(_ value: AttributeValue, _ needles: [[UInt8]]) -> Bool {
        UTF8Bytes.withJavaScriptString(value) { haystack in
            needles.contains { needle in needle.withUnsafeBufferPointer { UTF8Bytes.contains(haystack, $0) } }
        }
    }

    private static func matchesAny(_ value: AttributeValue, _ regexes: [SendableRegex?]) -> Bool {
        let text = value.javaScriptString
        return regexes.contains { $0?.matches(text) ?? true }
    }

    private static func compareNumber(_ value: AttributeValue, _ op: ComparisonOperator, _ target: Double) -> Bool {
        let number: Double
        switch value {
        case .number(let direct): number = direct
        case .string(let text): number = JavaScript.number(from: text)
        default: number = value.javaScriptNumber
        }
        if number.isNaN || target.isNaN { return false }
        return op.holds(forOrdering: number < target ? -1 : (number > target ? 1 : 0))
    }

    private static func evaluateAudience(_ value: AttributeValue, _ op: AudienceOperator, _ targets: [[UInt8]]) -> Bool
    {
        guard let names = value.stringListValue else { return false }
        let isMember = { (target: [UInt8]) in
            target.withUnsafeBufferPointer { target in
                names.contains { name in UTF8Bytes.with(name) { UTF8Bytes.equal($0, target) } }
            }
        }
        switch op {
        case .inAtLeastOne: return targets.contains(where: isMember)
        case .notInAtLeastOne: return !targets.contains(where: isMember)
        case .inAll: return targets.allSatisfy(isMember)
        case .notInAll: return !targets.allSatisfy(isMember)
        }
    }
}

/// `==`/`!=`/`in` targets, folded per ``StringMatching`` and indexed for lookup.
private struct StringMembership: Sendable {
    /// Every target, matched whole.
    let whole: FoldedStringSet
    /// Language-tag targets without a subtag (`en`), which also match `en-US`, `en_gb`, …
    let primaryLanguages: FoldedStringSet?

    init(_ targets: [String], matching: StringMatching) {
        switch matching {
        case .exact:
            whole = FoldedStringSet(targets, folding: .none)
            primaryLanguages = nil
        case .caseInsensitive:
            whole = FoldedStringSet(targets, folding: .asciiCase)
            primaryLanguages = nil
        case .languageTag:
            whole = FoldedStringSet(targets, folding: .languageTag)
            let primaries = targets.filter { !$0.utf8.contains(where: UTF8Bytes.isSubtagSeparator) }
            primaryLanguages = primaries.isEmpty ? nil : FoldedStringSet(primaries, folding: .languageTag)
        }
    }

    func contains(_ value: AttributeValue) -> Bool {
        UTF8Bytes.withJavaScriptString(value) { bytes in
            if whole.contains(bytes) { return true }
            guard let primaryLanguages,
                let separator = bytes.firstIndex(where: UTF8Bytes.isSubtagSeparator)
            else { return false }
            return primaryLanguages.contains(UnsafeBufferPointer(rebasing: bytes[..<separator]))
        }
    }
}
