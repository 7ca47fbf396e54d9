/// A document that is not valid JSON, or is too large or deeply nested to read safely.
///
/// The message says where (line, column and JSON path) and what was expected:
/// `line 12, column 7 (in parameters.welcome): expected ',' or '}' after an object member, found '"'`.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what was expected instead.
    public var message: String
    /// The 1-based line of the offending byte.
    public var line: Int
    /// The 1-based column, counted in bytes from the start of the line.
    public var column: Int
    /// The member or element being read when the error happened.
    public var path: JSONPath

    /// Creates an error.
    public init(message: String, line: Int, column: Int, path: JSONPath) {
        self.message = message
        self.line = line
        self.column = column
        self.path = path
    }

    /// The full message with its position.
    public var description: String {
        let location = path.components.isEmpty ? "" : " (in \(path))"
        return "line \(line), column \(column)\(location): \(message)"
    }
}

/// Limits that keep a hostile or broken document from exhausting memory or the stack.
public struct JSONParseLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects accepted.
    public var maximumDepth: Int
    /// The largest document accepted, in bytes.
    public var maximumBytes: Int

    /// Creates limits.
    public init(maximumDepth: Int = 256, maximumBytes: Int = 64 << 20) {
        self.maximumDepth = maximumDepth
        self.maximumBytes = maximumBytes
    }

    /// 256 levels, 64 MiB: far above any real template, far below what could hurt.
    public static let `default` = JSONParseLimits()
}
