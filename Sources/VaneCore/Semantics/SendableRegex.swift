import Foundation

/// An `NSRegularExpression`, which is immutable and documented thread-safe, marked `Sendable` so
/// compiled rules and scanners can hold one.
///
/// Matching is bounded, because the text comes from clients and the pattern from a template:
/// text longer than ``maximumTextLength`` UTF-16 units never matches, and a match that runs
/// longer than ``timeBudgetNanoseconds`` (a pattern that backtracks catastrophically, such as `(a+)+$`)
/// is stopped and counts as no match. ICU reports progress while it searches, which is where
/// the clock is read.
struct SendableRegex: @unchecked Sendable {
    let expression: NSRegularExpression

    /// The longest text a `matches` rule examines, in UTF-16 units.
    static let maximumTextLength = 4096
    /// The longest one match may run before it is stopped, in nanoseconds (10 ms).
    static let timeBudgetNanoseconds: UInt64 = 10_000_000

    /// `.some(nil)` for the empty pattern (ICU rejects it; JavaScript matches everywhere), nil when
    /// the pattern does not compile, so `compactMap` drops patterns that can never match.
    static func compile(_ pattern: String) -> SendableRegex?? {
        if pattern.isEmpty { return .some(nil) }
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return nil }
        return SendableRegex(expression: expression)
    }

    /// Whether the expression matches anywhere in the text, within the bounds above.
    func matches(_ text: String) -> Bool {
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

/// Finds repetition nested in repetition — `(a+)+`, `(\w*)*`, `(x+x+){2,}` — the shape that
/// makes a backtracking engine take exponential time on some inputs. A heuristic for a publish
/// warning: it looks at the pattern's structure only, so it can miss other slow shapes
/// (overlapping alternations such as `(a|a)*`), which the time budget still stops.
enum CatastrophicBacktracking {
    /// Whether `pattern` repeats a group that itself holds an unbounded repetition.
    static func isLikely(in pattern: String) -> Bool {
        let characters = Array(pattern)
        // For each open group: whether it holds an unbounded quantifier so far.
        var groups: [Bool] = []
        var index = 0
        var inClass = false
        while index < characters.count {
            let character = characters[index]
            if character == "\\" {
                index += 2
                continue
            }
            if inClass {
                if character == "]" { inClass = false }
                index += 1
                continue
            }
            switch character {
            case "[": inClass = true
            case "(": groups.append(false)
            case ")":
                let inner = groups.popLast() ?? false
                let repeated = isUnboundedQuantifier(characters, at: index + 1)
                if inner && repeated { return true }
                // A group that holds or is an unbounded repetition makes its parent one too.
                if inner || repeated, !groups.isEmpty { groups[groups.count - 1] = true }
            case "*", "+":
                if !groups.isEmpty { groups[groups.count - 1] = true }
            case "{":
                if isUnboundedQuantifier(characters, at: index), !groups.isEmpty { groups[groups.count - 1] = true }
            default: break
            }
            index += 1
        }
        return false
    }

    /// `*`, `+` or `{n,}` (and `{n,m}` with m > 1, which repeats as badly for large m) at `index`.
    private static func isUnboundedQuantifier(_ characters: [Character], at index: Int) -> Bool {
        guard index < characters.count else { return false }
        switch characters[index] {
        case "*", "+": return true
        case "{":
            guard let close = characters[index...].firstIndex(of: "}") else { return false }
            let body = String(characters[(index + 1)..<close])
            let bounds = body.split(separator: ",", omittingEmptySubsequences: false)
            guard bounds.count == 2 else { return false }
            guard let upper = Int(bounds[1]) else { return bounds[1].isEmpty }
            return upper > 1
        default: return false
        }
    }
}
