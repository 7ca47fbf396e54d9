import Foundation

/// An `NSRegularExpression`, which is immutable and documented thread-safe, marked `Sendable` so
/// compiled rules and scanners can hold one.
struct SendableRegex: @unchecked Sendable {
    let expression: NSRegularExpression

    /// `.some(nil)` for the empty pattern (ICU rejects it; JavaScript matches everywhere), nil when
    /// the pattern does not compile, so `compactMap` drops patterns that can never match.
    static func compile(_ pattern: String) -> SendableRegex?? {
        if pattern.isEmpty { return .some(nil) }
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return nil }
        return SendableRegex(expression: expression)
    }

    /// Whether the expression matches anywhere in the text.
    func matches(_ text: String) -> Bool {
        expression.firstMatch(in: text, options: [], range: NSRange(location: 0, length: text.utf16.count)) != nil
    }
}
