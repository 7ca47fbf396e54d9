import Foundation
import VaneAuthoring
import VaneCore
import VaneServerCore

/// Writes condition expressions for the common targeting rules, in the text Firebase uses, so
/// the console's rule builder and a person typing the same rule produce the same expression.
///
/// ```swift
/// let rule = ConditionBuilder.Rule.country(["DE", "AT"])
/// try ConditionBuilder.expression(for: rule)  // device.country in ['DE', 'AT']
/// ```
///
/// Every value is quoted with ``quote(_:)`` (single quotes; `\'` and `\\` escaped), and every
/// expression it returns has been parsed by VaneCore's ``ConditionParser``.
enum ConditionBuilder {
    /// One rule of the builder.
    enum Rule: Sendable, Equatable {
        /// `device.country in ['DE', 'AT']`: ISO 3166-1 alpha-2 codes.
        case country([String])
        /// `device.language in ['de', 'en-GB']`: BCP 47 tags.
        case language([String])
        /// `app.version.>=(['2.1.0'])`.
        case appVersion(comparison: String, version: String)
        /// `percent('seed') between 0 and 50`; no seed writes `percent between 0 and 50`.
        case percent(seed: String, lower: String, upper: String)
        /// A custom signal compared with ``SignalOperator``.
        case customSignal(key: String, comparison: SignalOperator, value: String)
        /// `dateTime >= dateTime('…', 'Zone')` and/or `dateTime < dateTime('…', 'Zone')`.
        case dateRange(from: String, until: String, zone: String)
    }

    /// How a custom signal is compared: as a number, as text, or as a semantic version.
    enum SignalOperator: String, Sendable, CaseIterable {
        case numberLess = "<"
        case numberLessOrEqual = "<="
        case numberEqual = "=="
        case numberNotEqual = "!="
        case numberGreater = ">"
        case numberGreaterOrEqual = ">="
        case exactlyMatches
        case contains
        case notContains
        case versionLess = "version <"
        case versionLessOrEqual = "version <="
        case versionEqual = "version =="
        case versionGreater = "version >"
        case versionGreaterOrEqual = "version >="

        /// What the builder's menu shows.
        var label: String {
            switch self {
            case .exactlyMatches: return "is exactly one of"
            case .contains: return "contains one of"
            case .notContains: return "contains none of"
            default:
                if rawValue.hasPrefix("version ") {
                    return "version " + rawValue.dropFirst("version ".count)
                }
                return "number " + rawValue
            }
        }
    }

    /// A builder input that cannot make a rule, with a message for the person.
    struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The comparisons `app.version` accepts.
    static let comparisons = ["==", "!=", "<", "<=", ">", ">="]

    /// `'value'` with `\` and `'` escaped, the only escapes the condition language knows
    /// (VaneCore's own quoting, so the builder writes what the printer writes).
    static func quote(_ value: String) -> String { ConditionExpression.literal(value) }

    /// `['a', 'b']`.
    static func list(_ values: [String]) -> String {
        "[" + values.map(quote).joined(separator: ", ") + "]"
    }

    /// `DE, at  ch` → `["DE", "at", "ch"]`: split at commas and white space, empties dropped.
    static func items(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
    }

    /// `gold tier, pro` → `["gold tier", "pro"]`: split at commas only, each trimmed, empties
    /// dropped.
    static func textItems(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The expression for one rule.
    /// - Throws: ``Problem`` when a value cannot be used (the message says why).
    static func expression(for rule: Rule) throws(Problem) -> String {
        let text: String
        switch rule {
        case .country(let codes):
            try requireValues(codes, "a country code")
            for code in codes where !(code.count == 2 && code.allSatisfy({ $0.isASCII && $0.isLetter })) {
                throw Problem(message: "\"\(code.prefix(20))\" is not a two-letter country code such as DE or US")
            }
            text = "device.country in \(list(codes))"
        case .language(let tags):
            try requireValues(tags, "a language")
            for tag in tags where tag.wholeMatch(of: /[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*/) == nil {
                throw Problem(message: "\"\(tag.prefix(20))\" is not a language tag such as de or en-GB")
            }
            text = "device.language in \(list(tags))"
        case .appVersion(let comparison, let version):
            guard comparisons.contains(comparison) else {
                throw Problem(message: "compare versions with ==, !=, <, <=, > or >=")
            }
            guard version.wholeMatch(of: /[0-9]+(\.[0-9]+)*/) != nil else {
                throw Problem(message: "a version is numbers separated by dots, such as 2.1.0")
            }
            text = "app.version.\(comparison)([\(quote(version))])"
        case .percent(let seed, let lowerText, let upperText):
            guard seed.count <= 32,
                seed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
            else {
                throw Problem(message: "a seed is at most 32 letters, digits, \"-\", \"_\" or \".\"")
            }
            guard let lower = Int(lowerText), let upper = Int(upperText), 0 <= lower, lower < upper, upper <= 100 else {
                throw Problem(message: "the percentages are whole numbers with 0 ≤ from < to ≤ 100")
            }
            let seeded = seed.isEmpty ? "percent" : "percent(\(quote(seed)))"
            text = "\(seeded) between \(lower) and \(upper)"
        case .customSignal(let key, let signalOperator, let value):
            guard !key.isEmpty else { throw Problem(message: "name the custom signal") }
            guard key.count <= 250 else { throw Problem(message: "a custom signal's name has at most 250 characters") }
            try requirePrintable(key)
            let subject = "app.customSignal[\(quote(key))]"
            switch signalOperator {
            case .exactlyMatches, .contains, .notContains:
                let values = textItems(value)
                try requireValues(values, "a value")
                text = "\(subject).\(signalOperator.rawValue)(\(list(values)))"
            case .versionLess, .versionLessOrEqual, .versionEqual, .versionGreater, .versionGreaterOrEqual:
                guard value.wholeMatch(of: /[0-9]+(\.[0-9]+){0,4}/) != nil else {
                    throw Problem(message: "a semantic version is up to five numbers separated by dots, such as 1.2.0")
                }
                let comparison = signalOperator.rawValue.dropFirst("version ".count)
                text = "version(\(subject)) \(comparison) \(quote(value))"
            default:
                guard value.wholeMatch(of: /[-+]?[0-9]{1,20}(\.[0-9]{1,10})?/) != nil else {
                    throw Problem(message: "\"\(value.prefix(20))\" is not a number such as 5, -2 or 0.75")
                }
                text = "\(subject) \(signalOperator.rawValue) \(value)"
            }
        case .dateRange(let from, let until, let zone):
            guard !from.isEmpty || !until.isEmpty else { throw Problem(message: "give a start, an end or both") }
            try requirePrintable(zone)
            let zoneText = zone.isEmpty ? "" : ", \(quote(zone))"
            var parts: [String] = []
            for (bound, comparison) in [(from, ">="), (until, "<")] where !bound.isEmpty {
                guard let dateTime = dateTimeText(bound) else {
                    throw Problem(message: "\"\(bound.prefix(30))\" is not a date and time such as 2026-12-24T18:00")
                }
                parts.append("dateTime \(comparison) dateTime(\(quote(dateTime))\(zoneText))")
            }
            text = parts.joined(separator: " && ")
        }
        do throws(ConditionSyntaxError) {
            _ = try ConditionParser.parse(text)
        } catch {
            // Values the patterns above let through but the parser refuses (a date that does
            // not exist, an unknown time zone): its message says what.
            throw Problem(message: "\(error.expected), found \(error.found)")
        }
        return text
    }

    /// `existing && rule`; an `existing` with a top-level `||` is put in parentheses first, so
    /// the new rule applies to all of it.
    static func appending(_ rule: String, to existing: String) -> String {
        let trimmed = existing.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return rule }
        if case .or? = try? ConditionParser.parse(trimmed) {
            return "(\(trimmed)) && \(rule)"
        }
        return "\(trimmed) && \(rule)"
    }

    /// The rule the builder's fields describe; `kind` is the rule's name (`country`, `language`,
    /// `version`, `percent`, `signal`, `date`).
    static func rule(kind: String, fields: [String: String]) throws(Problem) -> Rule {
        func field(_ name: String) -> String {
            fields[name]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        switch kind {
        case "country": return .country(items(field("rule_countries")))
        case "language": return .language(items(field("rule_languages")))
        case "version": return .appVersion(comparison: field("rule_version_op"), version: field("rule_version"))
        case "percent":
            return .percent(
                seed: field("rule_seed"),
                lower: field("rule_percent_from"),
                upper: field("rule_percent_to")
            )
        case "signal":
            guard let signalOperator = SignalOperator(rawValue: field("rule_signal_op")) else {
                throw Problem(message: "choose how to compare the custom signal")
            }
            return .customSignal(
                key: field("rule_signal_key"),
                comparison: signalOperator,
                value: field("rule_signal_value")
            )
        case "date":
            return .dateRange(from: field("rule_date_from"), until: field("rule_date_until"), zone: field("rule_zone"))
        default:
            throw Problem(message: "there is no rule \"\(kind.prefix(20))\"")
        }
    }

    /// `2026-12-24T18:00` (an HTML date-time field) → `2026-12-24T18:00:00`; seconds kept.
    private static func dateTimeText(_ text: String) -> String? {
        if text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}/) != nil { return text + ":00" }
        if text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/) != nil { return text }
        return nil
    }

    private static func requireValues(_ values: [String], _ what: String) throws(Problem) {
        guard !values.isEmpty else { throw Problem(message: "give at least \(what)") }
        guard values.count <= 100 else { throw Problem(message: "a rule takes at most 100 values") }
        for value in values { try requirePrintable(value) }
    }

    private static func requirePrintable(_ value: String) throws(Problem) {
        guard value.count <= 500 else { throw Problem(message: "a value has at most 500 characters") }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Problem(message: "values cannot contain line breaks or other control characters")
        }
    }
}

/// The result of checking an expression with VaneCore's parser, ready to show: the message and
/// the expression cut around the problem, so a page can mark the column.
struct ConditionCheck: Sendable, Equatable {
    /// Whether the expression parses.
    var ok: Bool
    /// `column 14: expected a string in single quotes, found "ios"`, or nil when it parses.
    var message: String?
    /// 1-based column of the problem, counted in characters.
    var column: Int?
    /// How many characters the problem spans (0 at the end of the expression).
    var length: Int?
    /// The expression before the problem.
    var before: String = ""
    /// The characters at the problem; a space when the problem is the end of the expression.
    var marked: String = ""
    /// The expression after the problem.
    var after: String = ""

    /// Checks `expression`.
    init(_ expression: String) {
        do throws(ConditionSyntaxError) {
            _ = try ConditionParser.parse(expression)
            ok = true
        } catch {
            ok = false
            message = error.description
            let characters = Array(expression)
            let start = min(max(error.column - 1, 0), characters.count)
            let length = min(Self.length(of: error.found, at: start, in: characters), characters.count - start)
            column = start + 1
            self.length = length
            before = String(characters[..<start])
            marked = length == 0 ? " " : String(characters[start..<(start + length)])
            after = String(characters[(start + length)...])
        }
    }

    /// How long the token the parser found is: its text when the message quotes it whole, one
    /// character otherwise, nothing at the end.
    private static func length(of found: String, at start: Int, in characters: [Character]) -> Int {
        guard start < characters.count else { return 0 }
        var text = found
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        if text.hasSuffix("…") { text = String(text.dropLast()) }
        let candidate = Array(text)
        guard !candidate.isEmpty, start + candidate.count <= characters.count,
            Array(characters[start..<(start + candidate.count)]) == candidate
        else { return 1 }
        return candidate.count
    }

    /// `{ok, message, column, length}` for the live check.
    var json: JSONValue {
        .object([
            "ok": .bool(ok),
            "message": message.map(JSONValue.string) ?? .null,
            "column": column.map { .number(JSONNumber($0)) } ?? .null,
            "length": length.map { .number(JSONNumber($0)) } ?? .null,
        ])
    }
}
