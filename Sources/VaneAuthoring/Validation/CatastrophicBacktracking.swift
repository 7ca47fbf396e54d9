import VaneCore

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

extension ConditionExpression {
    /// Every `matches` pattern in the tree, in order.
    var matchesPatterns: [String] {
        switch self {
        case .attribute(let condition):
            if case .string(.matches, let patterns) = condition.test { return patterns }
            return []
        case .and(let operands), .or(let operands): return operands.flatMap(\.matchesPatterns)
        case .not(let operand): return operand.matchesPatterns
        case .constant, .percent: return []
        }
    }
}
