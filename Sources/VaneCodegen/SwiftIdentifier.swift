/// Turns keys and variant names into Swift identifiers: `new_checkout` → `newCheckout`,
/// `one-page` → `onePage`, `default` → `` `default` ``.
public enum SwiftIdentifier {
    /// Swift's keywords, which must be escaped with backticks to serve as names.
    public static let reservedWords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private", "precedencegroup",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case",
        "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat",
        "return", "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self",
        "super", "throws", "true", "try", "_",
    ]

    /// The lowerCamelCase name for a key, without escaping; nil when the key has no letter or digit.
    ///
    /// Words are split at every character that is not an ASCII letter or digit; a name that would
    /// start with a digit gets a `_` in front.
    public static func lowerCamelCase(_ key: String) -> String? {
        let words = key.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map(String.init)
        guard let first = words.first else { return nil }
        var name = lowerFirst(first)
        for word in words.dropFirst() { name += upperFirst(word) }
        if let initial = name.first, initial.isNumber { name = "_" + name }
        return name
    }

    /// The UpperCamelCase name for a key, for type names; nil when the key has no letter or digit.
    public static func upperCamelCase(_ key: String) -> String? {
        guard let lower = lowerCamelCase(key) else { return nil }
        if lower.hasPrefix("_") { return "_" + upperFirst(String(lower.dropFirst())) }
        return upperFirst(lower)
    }

    /// The name as it is written in code: in backticks when it is a keyword.
    public static func escaped(_ name: String) -> String {
        reservedWords.contains(name) ? "`\(name)`" : name
    }

    /// Whether a text is a plain Swift identifier (ASCII letters, digits and `_`, not starting with a digit).
    public static func isValidTypeName(_ text: String) -> Bool {
        guard let first = text.first, !first.isNumber else { return false }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                && !(part.first?.isNumber ?? true)
        }
    }

    /// A word with its first letter lower-cased; an all-capitals word (`HTTP`) is lower-cased whole.
    static func lowerFirst(_ word: String) -> String {
        if word.allSatisfy({ $0.isUppercase || $0.isNumber }) { return word.lowercased() }
        return word.prefix(1).lowercased() + word.dropFirst()
    }

    static func upperFirst(_ word: String) -> String {
        word.prefix(1).uppercased() + word.dropFirst()
    }
}
