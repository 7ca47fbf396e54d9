/// One problem found in a template, at a JSON path.
///
/// ```
/// error: parameters.checkout_enabled.defaultValue.value: "yes" is not a BOOLEAN; use "true" or "false"
/// ```
public struct ValidationIssue: Sendable, Hashable, CustomStringConvertible {
    /// How serious a problem is.
    public enum Severity: String, Sendable, Hashable, Comparable {
        /// The template cannot be published as it is.
        case error
        /// The template works, but probably not as meant.
        case warning

        /// Errors sort before warnings.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .error && rhs == .warning }
    }

    /// Whether this blocks publishing.
    public var severity: Severity
    /// Where the problem is.
    public var path: JSONPath
    /// What is wrong and what would be right.
    public var message: String
    /// A stable identifier for the rule, for scripts: `value-type`, `unknown-condition`, …
    public var rule: String

    /// Creates an issue.
    public init(_ severity: Severity, at path: JSONPath, rule: String, _ message: String) {
        self.severity = severity
        self.path = path
        self.rule = rule
        self.message = message
    }

    /// `error: path: message`.
    public var description: String { "\(severity.rawValue): \(path): \(message)" }
}

/// A JSON document (a template, a context, a defaults file) that could not be read: the JSON is
/// malformed, or fields have the wrong type.
///
/// It lists every problem found, each with its JSON path.
public struct DocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problems, in document order.
    public var issues: [ValidationIssue]

    /// Creates an error from its issues.
    public init(issues: [ValidationIssue]) {
        self.issues = issues
    }

    /// Creates an error for a document that is not JSON.
    public init(_ error: JSONParseError) {
        self.issues = [
            ValidationIssue(
                .error,
                at: error.path,
                rule: "json-syntax",
                "line \(error.line), column \(error.column): \(error.message)"
            )
        ]
    }

    /// One line per problem.
    public var description: String { issues.map(\.description).joined(separator: "\n") }
}

extension DocumentError {
    /// Parses a document, turning a syntax error into a ``DocumentError``: the first step of every
    /// `init(data:)` that reads a Vane document (templates, defaults, flags files).
    public static func parse(
        _ data: some Collection<UInt8>,
        limits: JSONParseLimits = .default
    ) throws(DocumentError) -> JSONValue {
        do {
            return try JSONValue.parse(data, limits: limits)
        } catch {
            throw DocumentError(error)
        }
    }
}
