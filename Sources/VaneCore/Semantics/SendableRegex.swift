import Foundation

/// An `NSRegularExpression`, which is immutable and documented thread-safe, marked `Sendable` so
/// compiled rules and scanners can hold one.
///
/// Matching is bounded, because the text comes from clients and the pattern from a template:
/// text longer than ``maximumTextLength`` UTF-16 units never matches, and a match that runs
/// longer than ``timeBudgetNanoseconds`` (a pattern that backtracks catastrophically, such as `(a+)+$`)
/// is stopped and counts as no match. ICU reports progress while it searches, which is where
/// the clock is read.
package struct SendableRegex: @unchecked Sendable {
    let expression: NSRegularExpression

    /// The longest text a `matches` rule examines, in UTF-16 units.
    static let maximumTextLength = 4096
    /// The longest one match may run before it is stopped, in nanoseconds (10 ms).
    static let timeBudgetNanoseconds: UInt64 = 10_000_000

    /// `.some(nil)` for the empty pattern (ICU rejects it; JavaScript matches everywhere), nil when
    /// the pattern does not compile, so `compactMap` drops patterns that can never match.
    package static func compile(_ pattern: String) -> SendableRegex?? {
        if pattern.isEmpty { return .some(nil) }
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return nil }
        return SendableRegex(expression: expression)
    }

    /// Whether the expression matches anywhere in the text, within the bounds above.
    package func matches(_ text: String) -> Bool {
        let length = text.utf16.count
        guard length <= Self.maximumTextLength else { return false }
        // DispatchTime: a monotonic clock on every platform the SDK supports (ContinuousClock
        // needs iOS 16).
        let deadline = DispatchTime.now().uptimeNanoseconds + Self.timeBudgetNanoseconds
        var matched = false
        expression.enumerateMatches(
            in: text,
            options: [.reportProgress],
            range: NSRange(location: 0, length: length)
        ) { match, _, stop in
            if match != nil {
                matched = true
                stop.pointee = true
            } else if DispatchTime.now().uptimeNanoseconds >= deadline {
                stop.pointee = true
            }
        }
        return matched
    }
}
