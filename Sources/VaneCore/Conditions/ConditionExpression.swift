public import Foundation

/// A condition parsed into a typed tree.
///
/// Client templates write conditions as expressions (`device.os == 'ios' && percent <= 20`);
/// server templates write them as structured JSON (`orCondition`, `andCondition`, `percent`,
/// `customSignal`). Both compile to this one tree, which the evaluator walks.
///
/// Vane's expression language is Firebase's, plus `||`, `!` and parentheses.
public indirect enum ConditionExpression: Sendable, Hashable {
    /// `true` or `false`.
    case constant(Bool)
    /// True when every operand is true; an empty list is true.
    case and([ConditionExpression])
    /// True when any operand is true; an empty list is false.
    case or([ConditionExpression])
    /// True when the operand is false. Vane only: Firebase has no negation.
    case not(ConditionExpression)
    /// A `percent` rule: the randomization id's bucket falls in a range.
    case percent(PercentCondition)
    /// A test on one attribute of the evaluation context.
    case attribute(AttributeCondition)
}

/// A `percent` rule, such as `percent('checkout') between 10 and 20`.
///
/// Bounds are micro-percents (a millionth of a percent, 0 … 100,000,000), the unit of
/// Firebase's server templates. `percent <= 20` is `.lessOrEqual(20_000_000)`.
public struct PercentCondition: Sendable, Hashable {
    /// The seed that decorrelates rollouts; empty for none.
    public var seed: String
    /// The range of micro-percentiles the rule accepts.
    public var range: PercentRange

    /// Creates a percent rule.
    public init(seed: String = "", range: PercentRange) {
        self.seed = seed
        self.range = range
    }
}

/// The micro-percentile range a ``PercentCondition`` accepts.
public enum PercentRange: Sendable, Hashable {
    /// `percent <= N`: the bucket is at most this many micro-percents.
    case lessOrEqual(Double)
    /// `percent > N`: the bucket is above this many micro-percents.
    case greaterThan(Double)
    /// `percent between L and U`: lower exclusive, upper inclusive, as Firebase does.
    case between(lower: Double, upper: Double)
    /// An operator this version does not know (a server template's `UNKNOWN`); never true.
    case unknown(String)
}

/// A rule that reads one attribute of the ``EvaluationContext`` and tests it.
///
/// The attribute name is the element's name (`app.version`, `device.country`, `dateTime`) or,
/// for `app.customSignal['k']` and `app.userProperty['k']`, the key `k`.
/// A rule whose attribute is missing from the context is false, whatever its operator.
public struct AttributeCondition: Sendable, Hashable {
    /// Where the rule reads its value, as written in the expression.
    public var subject: ConditionSubject
    /// What the rule checks.
    public var test: AttributeTest

    /// Creates an attribute rule.
    public init(subject: ConditionSubject, test: AttributeTest) {
        self.subject = subject
        self.test = test
    }

    /// The name of the context attribute this rule reads.
    public var attributeName: String { subject.attributeName }
}

/// The attribute a rule reads, remembering how the expression spelled it.
public enum ConditionSubject: Sendable, Hashable {
    /// A built-in element such as `app.version`, `device.country` or `dateTime`.
    case element(ConditionElement)
    /// `app.customSignal['key']`, or a server template's `customSignalKey`.
    case customSignal(String)
    /// `app.userProperty['key']`.
    case userProperty(String)

    /// The name of the context attribute read.
    public var attributeName: String {
        switch self {
        case .element(let element): return element.rawValue
        case .customSignal(let key): return key
        case .userProperty(let key): return key
        }
    }
}

/// The built-in elements of the condition language; the raw value is the attribute name.
public enum ConditionElement: String, Sendable, Hashable, CaseIterable {
    /// `app.id`: the app's identifier.
    case appId = "app.id"
    /// `app.version`: the app's marketing version, such as `2.1.0`.
    case appVersion = "app.version"
    /// `app.build`: the app's build number.
    case appBuild = "app.build"
    /// `app.audiences`: a list of audience names the user belongs to.
    case appAudiences = "app.audiences"
    /// `app.importedSegments`: a list of imported segment names.
    case appImportedSegments = "app.importedSegments"
    /// `app.firstOpenTimestamp`: when the app was first opened.
    case appFirstOpenTimestamp = "app.firstOpenTimestamp"
    /// `app.firebaseInstallationId`: the installation id; defaults to the randomization id.
    case appFirebaseInstallationId = "app.firebaseInstallationId"
    /// `device.os`: `ios`, `android`, `macos`, `linux`, `web`, …
    case deviceOS = "device.os"
    /// `device.country`: an ISO 3166-1 alpha-2 region code, matched case-insensitively.
    case deviceCountry = "device.country"
    /// `device.language`: a BCP 47 language tag, matched case-insensitively.
    case deviceLanguage = "device.language"
    /// `dateTime`: the time of the evaluation, unless the context pins it.
    case dateTime = "dateTime"
}

/// What an ``AttributeCondition`` checks about its attribute's value.
public enum AttributeTest: Sendable, Hashable {
    /// `==` (or `!=` when `negated`) against one string: `app.id == 'x'`, `device.os != 'ios'`.
    case equals(String, negated: Bool, matching: StringMatching)
    /// `in [...]`: the value equals one of the strings: `device.country in ['us', 'gb']`.
    case inList([String], matching: StringMatching)
    /// A string method over a list of targets, any-of: `.contains([...])`, `.matches([...])`.
    case string(StringOperator, [String])
    /// A numeric comparison with JavaScript `Number()` semantics: `app.customSignal['n'] >= 5`.
    /// The target keeps its text as written.
    case number(ComparisonOperator, String)
    /// A dotted-version comparison: `app.version.>=(['2.1.0'])`,
    /// `version(app.customSignal['v']) >= '1.2'`.
    case version(ComparisonOperator, String)
    /// An audience method over a list attribute: `app.audiences.inAtLeastOne([...])`.
    case audience(AudienceOperator, [String])
    /// A date comparison: `dateTime < dateTime('2030-01-01T00:00:00', 'UTC')`.
    case date(ComparisonOperator, DateLiteral)
}

/// How `==` and `in` compare strings.
public enum StringMatching: Sendable, Hashable {
    /// Exact, case-sensitive equality (`app.id`, `app.firebaseInstallationId`).
    case exact
    /// Equality ignoring ASCII case (`device.os`, `device.country`).
    case caseInsensitive
    /// BCP 47 tags ignoring case, with `_` read as `-`; a target without a region (`en`)
    /// also matches every region of that language (`en-US`, `en-GB`).
    case languageTag
}

/// The comparison operators: `==`, `!=`, `<`, `<=`, `>`, `>=`.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`
    case equal = "=="
    /// `!=`
    case notEqual = "!="
    /// `<`
    case lessThan = "<"
    /// `<=`
    case lessOrEqual = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`
    case greaterOrEqual = ">="

    /// Applies the operator to the result of a three-way comparison (-1, 0 or 1).
    @inlinable
    public func holds(forOrdering ordering: Int) -> Bool {
        switch self {
        case .equal: return ordering == 0
        case .notEqual: return ordering != 0
        case .lessThan: return ordering < 0
        case .lessOrEqual: return ordering <= 0
        case .greaterThan: return ordering > 0
        case .greaterOrEqual: return ordering >= 0
        }
    }
}

/// The string methods, each any-of over its list of targets.
public enum StringOperator: String, Sendable, Hashable, CaseIterable {
    /// Some target is a substring of the value.
    case contains
    /// No target is a substring of the value.
    case notContains
    /// Some target equals the value, both trimmed of white space.
    case exactlyMatches
    /// Some target, a regular expression, matches somewhere in the value.
    case matches
}

/// The audience methods over a list attribute.
public enum AudienceOperator: String, Sendable, Hashable, CaseIterable {
    /// The list holds at least one of the targets.
    case inAtLeastOne
    /// The list holds none of the targets.
    case notInAtLeastOne
    /// The list holds every target.
    case inAll
    /// The list lacks at least one target.
    case notInAll
}

/// A date as written in a condition: `('2030-01-01T00:00:00', 'America/Los_Angeles')`.
public struct DateLiteral: Sendable, Hashable {
    /// The date-time text, `YYYY-MM-DDTHH:MM:SS`.
    public var text: String
    /// The Olson time zone name, or nil for UTC.
    public var timeZone: String?
    /// The instant the text names in that zone.
    public var date: Date

    /// Creates a date literal from its parts; ``ConditionParser`` builds these from text.
    public init(text: String, timeZone: String?, date: Date) {
        self.text = text
        self.timeZone = timeZone
        self.date = date
    }
}

extension ConditionExpression {
    /// Whether a `percent` rule appears anywhere in the tree, so the condition splits users.
    public var containsPercent: Bool {
        switch self {
        case .percent: return true
        case .and(let operands), .or(let operands): return operands.contains { $0.containsPercent }
        case .not(let operand): return operand.containsPercent
        case .constant, .attribute: return false
        }
    }
}
