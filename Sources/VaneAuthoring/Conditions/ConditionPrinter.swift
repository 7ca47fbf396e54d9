public import VaneCore

extension ConditionExpression {
    /// The condition in canonical Vane syntax, with as few parentheses as precedence allows.
    ///
    /// For every tree ``ConditionParser`` produces, parsing this text gives the same tree back.
    /// Trees the parser cannot produce print as close as the syntax allows: `.and([])` is
    /// `true`, `.or([])` is `false`, a one-operand `.and`/`.or` is its operand, a percent
    /// range `.unknown` (never true) is `false`, and a numeric target that is not a number
    /// prints quoted, which the parser rejects.
    public var expressionText: String {
        ConditionPrinter.vaneText(self, context: .or)
    }

    /// The condition in Firebase's client syntax (`a && b`, no spaces inside method calls),
    /// or the first reason Firebase cannot express it.
    ///
    /// Firebase can express a constant, one rule, or an AND of rules (nested ANDs flatten;
    /// `.and([])` is `true`). See ``firebaseIncompatibilities`` for every reason at once.
    public func firebaseExpression() -> Result<String, FirebaseIncompatibility> {
        var atoms: [ConditionExpression] = []
        var problems: [FirebaseIncompatibility] = []
        ConditionPrinter.collectFirebaseAtoms(self, into: &atoms, problems: &problems)
        if let first = problems.first { return .failure(first) }
        if atoms.isEmpty { return .success("true") }
        return .success(atoms.map(ConditionPrinter.atomText).joined(separator: " && "))
    }

    /// Every reason Firebase's client syntax cannot express this condition; empty when it can.
    public var firebaseIncompatibilities: [FirebaseIncompatibility] {
        var atoms: [ConditionExpression] = []
        var problems: [FirebaseIncompatibility] = []
        ConditionPrinter.collectFirebaseAtoms(self, into: &atoms, problems: &problems)
        return problems
    }
}

/// Something in a ``ConditionExpression`` that Firebase's condition syntax cannot express.
public struct FirebaseIncompatibility: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Reason: Sendable, Equatable {
        /// The condition uses `||`, which Firebase lacks.
        case usesOr
        /// The condition uses `!`, which Firebase lacks.
        case usesNot
        /// A string holds `'` or `\`, which Firebase cannot escape.
        case unquotableString(String)
        /// A percent rule whose operator Firebase's client syntax lacks (a server `UNKNOWN`).
        case unknownPercentOperator(String)
        /// A percent bound that is not a whole number of micro-percents in 0…100 %, or a
        /// `between` whose lower bound is above its upper bound.
        case invalidPercent(Double)
        /// A numeric comparison whose target is not a number as Firebase writes one.
        case nonNumericTarget(String)
        /// A rule Firebase has no syntax for, such as `app.id !=` or an empty list; the
        /// associated value is the rule in Vane syntax.
        case unsupportedRule(String)
    }

    /// What kind of problem it is.
    public var reason: Reason
    /// What Firebase cannot express and what to do about it.
    public var message: String

    /// Creates an incompatibility with the standard message for its reason.
    public init(_ reason: Reason) {
        self.reason = reason
        self.message = Self.message(for: reason)
    }

    /// The message.
    public var description: String { message }

    private static func message(for reason: Reason) -> String {
        switch reason {
        case .usesOr:
            return "Firebase conditions cannot use \"||\"; split the OR into separate conditions that share "
                + "the parameter's value, or use a list operator such as in ['a', 'b']"
        case .usesNot:
            return "Firebase conditions cannot use \"!\"; use a negative operator instead "
                + "(!=, .notContains, .notInAtLeastOne, .notInAll)"
        case .unquotableString(let value):
            return "Firebase strings have no escapes, so it cannot express \(quoted(value)), which holds "
                + "a single quote or a backslash; change the value"
        case .unknownPercentOperator(let name):
            return "Firebase has no client syntax for the percent operator \(name); use <=, > or between"
        case .invalidPercent(let micros):
            return "Firebase cannot express the percent bound \(MicroPercent.text(micros)) %; use 0 to 100 "
                + "with at most 6 decimals, and a lower bound no larger than the upper"
        case .nonNumericTarget(let text):
            return "Firebase compares with a number written like 5 or -2.5, not \(quoted(text)); "
                + "use a string method such as .exactlyMatches([…]) instead"
        case .unsupportedRule(let text):
            return "Firebase has no syntax for \(text); rewrite it with the element's Firebase operators"
        }
    }
}

/// Writes ``ConditionExpression`` trees as text.
enum ConditionPrinter {
    /// The loosest operator a position accepts without parentheses.
    enum Context: Int, Comparable {
        case or, and, unary

        static func < (lhs: Context, rhs: Context) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    static func vaneText(_ expression: ConditionExpression, context: Context) -> String {
        switch expression {
        case .and(let operands):
            return combined(operands, separator: " && ", empty: "true", level: .and, context: context)
        case .or(let operands):
            return combined(operands, separator: " || ", empty: "false", level: .or, context: context)
        case .not(let operand):
            return "!" + vaneText(operand, context: .unary)
        default:
            return atomText(expression)
        }
    }

    private static func combined(
        _ operands: [ConditionExpression],
        separator: String,
        empty: String,
        level: Context,
        context: Context
    ) -> String {
        if operands.isEmpty { return empty }
        if operands.count == 1, let only = operands.first { return vaneText(only, context: context) }
        // Operands bind at least as tightly as the next level up.
        let operandContext = Context(rawValue: level.rawValue + 1) ?? .unary
        let text = operands.map { vaneText($0, context: operandContext) }.joined(separator: separator)
        return level < context ? "(\(text))" : text
    }

    /// An atom, in the syntax Vane and Firebase share.
    static func atomText(_ expression: ConditionExpression) -> String {
        switch expression {
        case .constant(let value): return value ? "true" : "false"
        case .percent(let percent): return percentText(percent)
        case .attribute(let rule): return ruleText(rule)
        case .and, .or, .not: return vaneText(expression, context: .unary)
        }
    }

    private static func percentText(_ percent: PercentCondition) -> String {
        let head = percent.seed.isEmpty ? "percent" : "percent(\(quoted(percent.seed)))"
        switch percent.range {
        case .lessOrEqual(let micros): return "\(head) <= \(MicroPercent.text(micros))"
        case .greaterThan(let micros): return "\(head) > \(MicroPercent.text(micros))"
        case .between(let lower, let upper):
            return "\(head) between \(MicroPercent.text(lower)) and \(MicroPercent.text(upper))"
        case .unknown: return "false"
        }
    }

    private static func ruleText(_ rule: AttributeCondition) -> String {
        let subject = subjectText(rule.subject)
        switch rule.test {
        case .equals(let value, let negated, _):
            return "\(subject) \(negated ? "!=" : "==") \(quoted(value))"
        case .inList(let values, _):
            return "\(subject) in \(listText(values))"
        case .string(let method, let values):
            return "\(subject).\(method.rawValue)(\(listText(values)))"
        case .number(let comparison, let text):
            return "\(subject) \(comparison.rawValue) \(isNumberText(text) ? text : quoted(text))"
        case .version(let comparison, let target):
            if case .element = rule.subject {
                return "\(subject).\(comparison.rawValue)([\(quoted(target))])"
            }
            return "version(\(subject)) \(comparison.rawValue) \(quoted(target))"
        case .audience(let method, let values):
            return "\(subject).\(method.rawValue)(\(listText(values)))"
        case .date(let comparison, let literal):
            let arguments = ([literal.text] + (literal.timeZone.map { [$0] } ?? [])).map(quoted)
                .joined(separator: ", ")
            let function = rule.subject == .element(.dateTime) ? "dateTime" : ""
            return "\(subject) \(comparison.rawValue) \(function)(\(arguments))"
        }
    }

    private static func subjectText(_ subject: ConditionSubject) -> String {
        switch subject {
        case .element(let element): return element.rawValue
        case .customSignal(let key): return "app.customSignal[\(quoted(key))]"
        case .userProperty(let key): return "app.userProperty[\(quoted(key))]"
        }
    }

    private static func listText(_ values: [String]) -> String {
        "[" + values.map(quoted).joined(separator: ", ") + "]"
    }

    /// `[-+]?digits(.digits)?`, the numbers the condition language writes.
    static func isNumberText(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.allSatisfy { part in !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    // MARK: Firebase

    static func collectFirebaseAtoms(
        _ expression: ConditionExpression,
        into atoms: inout [ConditionExpression],
        problems: inout [FirebaseIncompatibility]
    ) {
        switch expression {
        case .and(let operands):
            for operand in operands { collectFirebaseAtoms(operand, into: &atoms, problems: &problems) }
        case .or(let operands):
            if operands.count == 1, let only = operands.first {
                collectFirebaseAtoms(only, into: &atoms, problems: &problems)
            } else if operands.isEmpty {
                atoms.append(.constant(false))
            } else {
                problems.append(FirebaseIncompatibility(.usesOr))
            }
        case .not:
            problems.append(FirebaseIncompatibility(.usesNot))
        case .constant:
            atoms.append(expression)
        case .percent(let percent):
            problems.append(contentsOf: percentProblems(percent))
            atoms.append(expression)
        case .attribute(let rule):
            problems.append(contentsOf: ruleProblems(rule))
            atoms.append(expression)
        }
    }

    private static func percentProblems(_ percent: PercentCondition) -> [FirebaseIncompatibility] {
        var problems = stringProblems([percent.seed])
        let bounds: [Double]
        switch percent.range {
        case .lessOrEqual(let micros), .greaterThan(let micros):
            bounds = [micros]
        case .between(let lower, let upper):
            bounds = [lower, upper]
            if lower > upper { problems.append(FirebaseIncompatibility(.invalidPercent(lower))) }
        case .unknown(let name):
            return problems + [FirebaseIncompatibility(.unknownPercentOperator(name))]
        }
        for micros in bounds where !(micros == micros.rounded() && (0...100_000_000).contains(micros)) {
            problems.append(FirebaseIncompatibility(.invalidPercent(micros)))
        }
        return problems
    }

    private static func ruleProblems(_ rule: AttributeCondition) -> [FirebaseIncompatibility] {
        var strings: [String] = []
        switch rule.subject {
        case .customSignal(let key), .userProperty(let key): strings.append(key)
        case .element: break
        }
        var lists: [[String]] = []
        switch rule.test {
        case .equals(let value, _, _): strings.append(value)
        case .inList(let values, _), .string(_, let values), .audience(_, let values): lists.append(values)
        case .number: break
        case .version(_, let target): strings.append(target)
        case .date(_, let literal): strings += [literal.text] + (literal.timeZone.map { [$0] } ?? [])
        }
        var problems = stringProblems(strings + lists.joined())
        if case .number(_, let text) = rule.test, !isNumberText(text) {
            problems.append(FirebaseIncompatibility(.nonNumericTarget(text)))
        }
        if !isFirebaseRule(rule) || lists.contains(where: \.isEmpty) {
            problems.append(FirebaseIncompatibility(.unsupportedRule(ruleText(rule))))
        }
        return problems
    }

    private static func stringProblems(_ strings: [String]) -> [FirebaseIncompatibility] {
        strings.filter { $0.contains("'") || $0.contains("\\") }
            .map { FirebaseIncompatibility(.unquotableString($0)) }
    }

    /// Whether Firebase has syntax for this element, operator and matching.
    private static func isFirebaseRule(_ rule: AttributeCondition) -> Bool {
        switch (rule.subject, rule.test) {
        case (.element(.appId), .equals(_, false, .exact)),
            (.element(.deviceOS), .equals(_, _, .caseInsensitive)),
            (.element(.deviceCountry), .inList(_, .caseInsensitive)),
            (.element(.deviceLanguage), .inList(_, .languageTag)),
            (.element(.appFirebaseInstallationId), .inList(_, .exact)),
            (.element(.appVersion), .string), (.element(.appVersion), .version),
            (.element(.appBuild), .string), (.element(.appBuild), .version),
            (.element(.appAudiences), .audience), (.element(.appImportedSegments), .audience),
            (.element(.appFirstOpenTimestamp), .date), (.element(.dateTime), .date),
            (.customSignal, .number), (.customSignal, .string), (.customSignal, .version),
            (.userProperty, .number), (.userProperty, .string):
            return true
        default:
            return false
        }
    }
}

extension ConditionExpression {
    /// `value` as a string literal of the expression language: single quotes, with `\'` and `\\`
    /// escaped — how Vane writes every string in an expression, for tools (the console's rule
    /// builder) that write expression text.
    public static func literal(_ value: String) -> String { quoted(value) }
}
