import Foundation

/// Parses client-template condition expressions into ``ConditionExpression`` trees.
///
/// The language is Firebase's (every element and operator of its condition reference) plus
/// Vane's `||`, `!`, parentheses and the string escapes `\'` and `\\`. Precedence is
/// `!` over `&&` over `||`; chains of one operator flatten into a single `.and` or `.or`.
///
/// ```swift
/// let condition = try ConditionParser.parse("device.os == 'ios' && percent <= 20", conditionName: "ios_20")
/// ```
public enum ConditionParser {
    /// How many parentheses and `!` may nest before the parser gives up.
    public static let maximumNestingDepth = 64

    /// Parses a whole expression.
    ///
    /// - Parameters:
    ///   - expression: The condition text, such as `app.version.>=(['2.0.0']) && percent <= 10`.
    ///   - conditionName: The condition's name, quoted in error messages.
    /// - Throws: ``ConditionSyntaxError`` pointing at the first problem.
    public static func parse(
        _ expression: String,
        conditionName: String? = nil
    ) throws(ConditionSyntaxError) -> ConditionExpression {
        do {
            var parser = try ExpressionParser(expression)
            return try parser.parseCondition()
        } catch {
            throw ConditionSyntaxError(
                conditionName: conditionName,
                expression: expression,
                column: error.column,
                expected: error.expected,
                found: error.found
            )
        }
    }
}

/// A recursive-descent parser over the lazily lexed tokens; recursion is bounded by the
/// nesting limit.
private struct ExpressionParser {
    private var lexer: ConditionLexer
    private var current: ConditionToken
    private var depth = 0

    init(_ expression: String) throws(ConditionParseFailure) {
        lexer = ConditionLexer(expression)
        current = try lexer.next()
    }

    mutating func parseCondition() throws(ConditionParseFailure) -> ConditionExpression {
        let condition = try parseOr(after: nil)
        guard current.kind == .end else {
            throw failure(expected: "\"&&\", \"||\" or the end of the condition")
        }
        return condition
    }

    // MARK: Combinators

    private mutating func parseOr(after previous: String?) throws(ConditionParseFailure) -> ConditionExpression {
        var operands = [try parseAnd(after: previous)]
        while isSymbol("||") {
            try advance()
            operands.append(try parseAnd(after: "||"))
        }
        return combine(operands, and: false)
    }

    private mutating func parseAnd(after previous: String?) throws(ConditionParseFailure) -> ConditionExpression {
        var operands = [try parseUnary(after: previous)]
        while isSymbol("&&") {
            try advance()
            operands.append(try parseUnary(after: "&&"))
        }
        return combine(operands, and: true)
    }

    /// One operand, or a flat `.and`/`.or` that splices nested groups of the same operator.
    private func combine(_ operands: [ConditionExpression], and isAnd: Bool) -> ConditionExpression {
        if operands.count == 1, let only = operands.first { return only }
        var flat: [ConditionExpression] = []
        for operand in operands {
            switch operand {
            case .and(let inner) where isAnd: flat.append(contentsOf: inner)
            case .or(let inner) where !isAnd: flat.append(contentsOf: inner)
            default: flat.append(operand)
            }
        }
        return isAnd ? .and(flat) : .or(flat)
    }

    private mutating func parseUnary(after previous: String?) throws(ConditionParseFailure) -> ConditionExpression {
        if isSymbol("!") {
            try enterNesting()
            try advance()
            let operand = try parseUnary(after: "!")
            depth -= 1
            return .not(operand)
        }
        if isSymbol("(") {
            let open = current
            try enterNesting()
            try advance()
            let inner = try parseOr(after: "(")
            guard isSymbol(")") else {
                throw failure(expected: "\"&&\", \"||\" or \")\" to close the \"(\" at column \(open.column)")
            }
            try advance()
            depth -= 1
            return inner
        }
        return try parseAtom(after: previous)
    }

    private mutating func enterNesting() throws(ConditionParseFailure) {
        depth += 1
        if depth > ConditionParser.maximumNestingDepth {
            throw failure(expected: "at most \(ConditionParser.maximumNestingDepth) nested parentheses and \"!\"")
        }
    }

    // MARK: Atoms

    private mutating func parseAtom(after previous: String?) throws(ConditionParseFailure) -> ConditionExpression {
        let expectation =
            previous.map { "a condition after \"\($0)\"" }
            ?? "a condition such as device.os == 'ios', percent <= 20, true or false"
        guard case .identifier(let name) = current.kind else { throw failure(expected: expectation) }
        switch name.lowercased() {
        case "true", "false":
            try advance()
            return .constant(name.lowercased() == "true")
        case "percent":
            try advance()
            return .percent(try parsePercent())
        default:
            break
        }
        switch name {
        case "app":
            try advance()
            return try parseAppElement()
        case "device":
            try advance()
            return try parseDeviceElement()
        case "dateTime":
            try advance()
            return try parseDate(on: .dateTime)
        case "firebaseInstallationId":
            try advance()
            return try parseInstallationId()
        case "version":
            try advance()
            return try parseVersionFunction()
        default:
            throw failure(
                expected: "a condition element (app.…, device.…, dateTime, percent, version(…), true or false)"
            )
        }
    }

    private mutating func parseAppElement() throws(ConditionParseFailure) -> ConditionExpression {
        try expectSymbol(".", "\".\" and an element name after \"app\"")
        let names =
            "id, version, build, userProperty, customSignal, firstOpenTimestamp, firebaseInstallationId, "
            + "audiences or importedSegments"
        guard case .identifier(let name) = current.kind else { throw failure(expected: "one of app.\(names)") }
        switch name {
        case "id":
            try advance()
            return try parseEquality(on: .appId, matching: .exact)
        case "version", "build":
            try advance()
            return try parseVersionElement(name == "version" ? .appVersion : .appBuild)
        case "userProperty", "customSignal":
            try advance()
            return try parseKeyed(isCustomSignal: name == "customSignal")
        case "firstOpenTimestamp":
            try advance()
            return try parseDate(on: .appFirstOpenTimestamp)
        case "firebaseInstallationId":
            try advance()
            return try parseInstallationId()
        case "audiences", "importedSegments":
            try advance()
            return try parseAudience(name == "audiences" ? .appAudiences : .appImportedSegments)
        default:
            throw failure(expected: "one of app.\(names)")
        }
    }

    private mutating func parseDeviceElement() throws(ConditionParseFailure) -> ConditionExpression {
        try expectSymbol(".", "\".\" and an element name after \"device\"")
        let names = "device.os, device.country, device.language or device.dateTime"
        guard case .identifier(let name) = current.kind else { throw failure(expected: "one of \(names)") }
        switch name {
        case "os":
            try advance()
            return try parseEquality(on: .deviceOS, matching: .caseInsensitive)
        case "country":
            try advance()
            return try parseInList(on: .deviceCountry, matching: .caseInsensitive)
        case "language":
            try advance()
            return try parseInList(on: .deviceLanguage, matching: .languageTag)
        case "dateTime":
            try advance()
            return try parseDate(on: .dateTime)
        default:
            throw failure(expected: "one of \(names)")
        }
    }

    private mutating func parseInstallationId() throws(ConditionParseFailure) -> ConditionExpression {
        try parseInList(on: .appFirebaseInstallationId, matching: .exact)
    }

    /// `== 'x'` or `!= 'x'`.
    private mutating func parseEquality(
        on element: ConditionElement,
        matching: StringMatching
    ) throws(ConditionParseFailure) -> ConditionExpression {
        let negated: Bool
        if isSymbol("==") {
            negated = false
        } else if isSymbol("!=") {
            negated = true
        } else {
            throw failure(expected: "\"==\" or \"!=\" after \(element.rawValue)")
        }
        try advance()
        let value = try parseString().value
        return attribute(.element(element), .equals(value, negated: negated, matching: matching))
    }

    /// `in ['a', 'b']`.
    private mutating func parseInList(
        on element: ConditionElement,
        matching: StringMatching
    ) throws(ConditionParseFailure) -> ConditionExpression {
        guard current.kind == .identifier("in") else {
            throw failure(expected: "\"in\" and a list, as in \(element.rawValue) in ['…']")
        }
        try advance()
        let list = try parseList().map(\.value)
        return attribute(.element(element), .inList(list, matching: matching))
    }

    /// `app.version` and `app.build`: `.>=(['2.0.0'])` or `.contains(['beta'])`.
    private mutating func parseVersionElement(
        _ element: ConditionElement
    ) throws(ConditionParseFailure) -> ConditionExpression {
        try expectSymbol(".", "\".\" and a method, as in \(element.rawValue).>=(['2.0.0'])")
        if let comparison = comparisonOperator() {
            try advance()
            try expectSymbol("(", "\"(\" after \(element.rawValue).\(comparison.rawValue)")
            try expectSymbol("[", "\"[\", as in \(element.rawValue).\(comparison.rawValue)(['2.0.0'])")
            let target = try parseString().value
            try expectSymbol("]", "\"]\" (a version comparison takes exactly one version)")
            try expectSymbol(")", "\")\" to close the method call")
            return attribute(.element(element), .version(comparison, target))
        }
        guard let method = stringOperator() else {
            throw failure(
                expected: "a comparison (==, !=, <, <=, >, >=) or a string method "
                    + "(contains, notContains, exactlyMatches, matches)"
            )
        }
        try advance()
        return attribute(.element(element), .string(method, try parseMethodList(method)))
    }

    /// `app.audiences.inAtLeastOne(['a'])`.
    private mutating func parseAudience(
        _ element: ConditionElement
    ) throws(ConditionParseFailure) -> ConditionExpression {
        let methods = "inAtLeastOne, notInAtLeastOne, inAll or notInAll"
        try expectSymbol(".", "\".\" and one of \(methods)")
        guard case .identifier(let name) = current.kind, let method = AudienceOperator(rawValue: name) else {
            throw failure(expected: "one of \(methods)")
        }
        try advance()
        try expectSymbol("(", "\"(\" after \(method.rawValue)")
        let list = try parseList().map(\.value)
        try expectSymbol(")", "\")\" to close the method call")
        return attribute(.element(element), .audience(method, list))
    }

    /// `app.customSignal['k'] >= 5` or `app.userProperty['k'].contains(['a'])`.
    private mutating func parseKeyed(isCustomSignal: Bool) throws(ConditionParseFailure) -> ConditionExpression {
        let key = try parseKey()
        let subject: ConditionSubject = isCustomSignal ? .customSignal(key) : .userProperty(key)
        if isSymbol(".") {
            try advance()
            guard let method = stringOperator() else {
                throw failure(expected: "a string method (contains, notContains, exactlyMatches or matches)")
            }
            try advance()
            return attribute(subject, .string(method, try parseMethodList(method)))
        }
        guard let comparison = comparisonOperator() else {
            throw failure(expected: "a comparison with a number, or \".\" and a string method")
        }
        try advance()
        switch current.kind {
        case .number(let text):
            try advance()
            return attribute(subject, .number(comparison, text))
        case .string(let value):
            let element = isCustomSignal ? "app.customSignal" : "app.userProperty"
            throw failure(
                expected:
                    "a number; to compare text write \(element)[\(quoted(key))].exactlyMatches([\(quoted(value))])"
            )
        default:
            throw failure(expected: "a number")
        }
    }

    /// `['key']` after `app.customSignal` or `app.userProperty`.
    private mutating func parseKey() throws(ConditionParseFailure) -> String {
        try expectSymbol("[", "\"[\" and a key in single quotes, as in ['key']")
        let key = try parseString().value
        try expectSymbol("]", "\"]\" after the key")
        return key
    }

    /// `version(app.customSignal['k']) >= '1.2.0'`.
    private mutating func parseVersionFunction() throws(ConditionParseFailure) -> ConditionExpression {
        try expectSymbol("(", "\"(\", as in version(app.customSignal['key']) >= '1.0'")
        guard current.kind == .identifier("app") else {
            throw failure(expected: "app.customSignal['…'] or app.userProperty['…']")
        }
        try advance()
        try expectSymbol(".", "\".\" after \"app\"")
        guard case .identifier(let name) = current.kind, name == "customSignal" || name == "userProperty" else {
            throw failure(expected: "customSignal or userProperty")
        }
        try advance()
        let key = try parseKey()
        try expectSymbol(")", "\")\" to close version(…)")
        guard let comparison = comparisonOperator() else {
            throw failure(expected: "a comparison (==, !=, <, <=, >, >=)")
        }
        try advance()
        let target = try parseString(expected: "a version in single quotes, such as '1.2.0'").value
        let subject: ConditionSubject = name == "customSignal" ? .customSignal(key) : .userProperty(key)
        return attribute(subject, .version(comparison, target))
    }

    /// `>= ('2022-10-31T14:37:47', 'America/Los_Angeles')` or `< dateTime('…')`.
    private mutating func parseDate(on element: ConditionElement) throws(ConditionParseFailure) -> ConditionExpression {
        guard let comparison = comparisonOperator() else {
            throw failure(expected: "a comparison (==, !=, <, <=, >, >=)")
        }
        try advance()
        if element == .dateTime {
            if current.kind == .identifier("device") {
                try advance()
                try expectSymbol(".", "\".\" after \"device\"")
            }
            guard current.kind == .identifier("dateTime") else {
                throw failure(expected: "dateTime('YYYY-MM-DDTHH:MM:SS', 'Zone/Name')")
            }
            try advance()
        }
        try expectSymbol("(", "\"(\" and a date in single quotes, such as ('2030-01-01T00:00:00', 'UTC')")
        let text = try parseString(expected: "a date in single quotes, such as '2030-01-01T00:00:00'")
        var zone: StringToken?
        if isSymbol(",") {
            try advance()
            zone = try parseString(expected: "a time zone in single quotes, such as 'America/Los_Angeles'")
        }
        try expectSymbol(")", zone == nil ? "\",\" and a time zone, or \")\"" : "\")\" after the time zone")
        let literal = try DateLiteralParser.literal(text: text, zone: zone)
        return attribute(.element(element), .date(comparison, literal))
    }

    /// After `percent`: `('seed')`, then `<= N`, `> N` or `between L and U`.
    private mutating func parsePercent() throws(ConditionParseFailure) -> PercentCondition {
        var seed = ""
        if isSymbol("(") {
            try advance()
            seed = try parseString(expected: "a seed in single quotes, such as percent('checkout')").value
            try expectSymbol(")", "\")\" after the seed")
        }
        if isSymbol("<=") || isSymbol(">") {
            let isLessOrEqual = isSymbol("<=")
            try advance()
            let value = try parsePercentValue()
            return PercentCondition(seed: seed, range: isLessOrEqual ? .lessOrEqual(value) : .greaterThan(value))
        }
        guard isKeyword("between") else { throw failure(expected: "\"<=\", \">\" or \"between\" after percent") }
        try advance()
        let lower = try parsePercentValue()
        guard isKeyword("and") else { throw failure(expected: "\"and\" and an upper bound") }
        try advance()
        let upperToken = current
        let upper = try parsePercentValue()
        guard lower <= upper else {
            throw ConditionParseFailure(
                column: upperToken.column,
                expected: "an upper bound no smaller than the lower bound",
                found: upperToken.foundDescription
            )
        }
        return PercentCondition(seed: seed, range: .between(lower: lower, upper: upper))
    }

    /// A percentage 0…100 with up to 6 decimals, as micro-percents.
    private mutating func parsePercentValue() throws(ConditionParseFailure) -> Double {
        let expectation = "a percentage from 0 to 100 with at most 6 decimals"
        guard case .number(let text) = current.kind, let micro = MicroPercent.parse(text) else {
            throw failure(expected: expectation)
        }
        try advance()
        return Double(micro)
    }

    // MARK: Strings and lists

    private typealias StringToken = (value: String, token: ConditionToken)

    private mutating func parseString(
        expected: String = "a string in single quotes"
    ) throws(ConditionParseFailure) -> StringToken {
        guard case .string(let value) = current.kind else { throw failure(expected: expected) }
        let token = current
        try advance()
        return (value, token)
    }

    /// `['a', 'b']`: at least one string, no trailing comma.
    private mutating func parseList() throws(ConditionParseFailure) -> [StringToken] {
        try expectSymbol("[", "\"[\" and a list of strings, as in ['a', 'b']")
        var items = [try parseString(expected: "a string in single quotes (a list needs at least one)")]
        while isSymbol(",") {
            try advance()
            items.append(try parseString(expected: "a string in single quotes after \",\""))
        }
        try expectSymbol("]", "\",\" or \"]\"")
        return items
    }

    /// `(['a', 'b'])` after a string method; `.matches` targets must compile.
    private mutating func parseMethodList(_ method: StringOperator) throws(ConditionParseFailure) -> [String] {
        try expectSymbol("(", "\"(\" after \(method.rawValue)")
        let items = try parseList()
        try expectSymbol(")", "\")\" to close the method call")
        if method == .matches {
            for item in items where (try? NSRegularExpression(pattern: item.value)) == nil {
                throw ConditionParseFailure(
                    column: item.token.column,
                    expected: "a regular expression that compiles",
                    found: item.token.foundDescription
                )
            }
        }
        return items.map(\.value)
    }

    // MARK: Tokens

    private mutating func advance() throws(ConditionParseFailure) {
        current = try lexer.next()
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private func isKeyword(_ keyword: String) -> Bool {
        if case .identifier(let name) = current.kind { return name.lowercased() == keyword }
        return false
    }

    private mutating func expectSymbol(_ symbol: String, _ expected: String) throws(ConditionParseFailure) {
        guard isSymbol(symbol) else { throw failure(expected: expected) }
        try advance()
    }

    private func comparisonOperator() -> ComparisonOperator? {
        if case .symbol(let symbol) = current.kind { return ComparisonOperator(rawValue: symbol) }
        return nil
    }

    private func stringOperator() -> StringOperator? {
        if case .identifier(let name) = current.kind { return StringOperator(rawValue: name) }
        return nil
    }

    private func failure(expected: String) -> ConditionParseFailure {
        ConditionParseFailure(column: current.column, expected: expected, found: current.foundDescription)
    }

    private func attribute(_ subject: ConditionSubject, _ test: AttributeTest) -> ConditionExpression {
        .attribute(AttributeCondition(subject: subject, test: test))
    }
}

/// Micro-percents from a percentage's text, without floating-point rounding.
package enum MicroPercent {
    /// `20` is 20,000,000 and `0.000001` is 1; nil when negative, above 100 or finer than 6 decimals.
    static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let wholeText = parts.first, !wholeText.isEmpty, wholeText.allSatisfy(\.isASCIIDigit) else { return nil }
        let fraction = parts.count > 1 ? parts[1] : ""
        guard fraction.count <= 6, fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        let significant = wholeText.drop(while: { $0 == "0" })
        guard significant.count <= 3, let whole = Int(wholeText) else { return nil }
        let padded = fraction + String(repeating: "0", count: 6 - fraction.count)
        guard let micros = Int(padded) else { return nil }
        let total = whole * 1_000_000 + micros
        return total <= 100_000_000 ? total : nil
    }

    /// The shortest percentage text for micro-percents: 20,500,000 is `20.5`.
    package static func text(_ micros: Double) -> String {
        guard micros.isFinite, micros == micros.rounded(), abs(micros) < 1e15 else {
            return "\(micros / 1_000_000)"
        }
        let value = Int64(micros)
        let sign = value < 0 ? "-" : ""
        let magnitude = value.magnitude
        let whole = magnitude / 1_000_000
        let fraction = magnitude % 1_000_000
        guard fraction != 0 else { return "\(sign)\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(sign)\(whole).\(digits)"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Quotes a string the way Vane writes it: single quotes, `\'` and `\\` escaped.
package func quoted(_ value: String) -> String {
    var result = "'"
    for character in value {
        if character == "'" || character == "\\" { result.append("\\") }
        result.append(character)
    }
    result.append("'")
    return result
}
