import Foundation
import Testing

@testable import VaneCore

/// A server-template custom-signal operator, mapped onto the ``AttributeTest`` the parser builds.
enum SignalOperator: String, Sendable, CaseIterable {
    case stringContains = "STRING_CONTAINS"
    case stringDoesNotContain = "STRING_DOES_NOT_CONTAIN"
    case stringExactlyMatches = "STRING_EXACTLY_MATCHES"
    case stringContainsRegex = "STRING_CONTAINS_REGEX"
    case numericLessThan = "NUMERIC_LESS_THAN"
    case numericLessEqual = "NUMERIC_LESS_EQUAL"
    case numericEqual = "NUMERIC_EQUAL"
    case numericNotEqual = "NUMERIC_NOT_EQUAL"
    case numericGreaterThan = "NUMERIC_GREATER_THAN"
    case numericGreaterEqual = "NUMERIC_GREATER_EQUAL"
    case versionLessThan = "SEMANTIC_VERSION_LESS_THAN"
    case versionLessEqual = "SEMANTIC_VERSION_LESS_EQUAL"
    case versionEqual = "SEMANTIC_VERSION_EQUAL"
    case versionNotEqual = "SEMANTIC_VERSION_NOT_EQUAL"
    case versionGreaterThan = "SEMANTIC_VERSION_GREATER_THAN"
    case versionGreaterEqual = "SEMANTIC_VERSION_GREATER_EQUAL"

    /// Numeric and version operators read only the first target, as Node does.
    func test(_ targets: [String]) -> AttributeTest {
        let first = targets.first ?? ""
        switch self {
        case .stringContains: return .string(.contains, targets)
        case .stringDoesNotContain: return .string(.notContains, targets)
        case .stringExactlyMatches: return .string(.exactlyMatches, targets)
        case .stringContainsRegex: return .string(.matches, targets)
        case .numericLessThan: return .number(.lessThan, first)
        case .numericLessEqual: return .number(.lessOrEqual, first)
        case .numericEqual: return .number(.equal, first)
        case .numericNotEqual: return .number(.notEqual, first)
        case .numericGreaterThan: return .number(.greaterThan, first)
        case .numericGreaterEqual: return .number(.greaterOrEqual, first)
        case .versionLessThan: return .version(.lessThan, first)
        case .versionLessEqual: return .version(.lessOrEqual, first)
        case .versionEqual: return .version(.equal, first)
        case .versionNotEqual: return .version(.notEqual, first)
        case .versionGreaterThan: return .version(.greaterThan, first)
        case .versionGreaterEqual: return .version(.greaterOrEqual, first)
        }
    }
}

/// One row of a signal table: operator, targets, actual value, Node's result.
struct SignalRow: Sendable, CustomTestStringConvertible {
    var op: SignalOperator
    var targets: [String]
    var actual: AttributeValue
    var expected: Bool

    var testDescription: String { "\(op.rawValue) \(targets) vs \(actual) → \(expected)" }

    /// Node's ws variant: targets `"   " + t + " "`, actual `" " + a + "  "` (numbers stringified first).
    var padded: SignalRow {
        let text: String
        switch actual {
        case .number(let number): text = JavaScript.string(from: number)
        case .string(let string): text = string
        default: text = actual.javaScriptString
        }
        return SignalRow(
            op: op,
            targets: targets.map { "   " + $0 + " " },
            actual: .string(" " + text + "  "),
            expected: expected
        )
    }

    func evaluate() -> Bool {
        CompiledAttributeTest(op.test(targets)).evaluate(actual)
    }
}

private func row(_ op: SignalOperator, _ targets: [String], _ actual: AttributeValue, _ expected: Bool) -> SignalRow {
    SignalRow(op: op, targets: targets, actual: actual, expected: expected)
}

@Suite struct NodeSignalTableTests {
    /// §8.2 rows that Node does not re-run with white space.
    static let plainRows: [SignalRow] = [
        row(.stringContains, ["foo", "biz"], "foobar", true),
        row(.stringContains, ["foo", "biz"], "bar", false),
        row(.stringDoesNotContain, ["foo", "biz"], "bar", true),
        row(.stringDoesNotContain, ["foo", "biz"], "foobar", false),
        row(.stringContainsRegex, ["foo", "^ba.*$"], "bar", true),
        row(.stringContainsRegex, ["  bar   "], "biz", false),
    ]

    /// §8.2 rows marked ws.
    static let wsRows: [SignalRow] = [
        row(.stringExactlyMatches, ["foo", "bar"], "bar", true),
        row(.stringExactlyMatches, [""], "", true),
        row(.stringExactlyMatches, ["foo", "biz"], "foobar", false),

        row(.numericLessThan, ["5"], "4", true),
        row(.numericLessThan, ["5"], "5", false),
        row(.numericLessThan, ["5"], "6", false),
        row(.numericLessThan, ["5"], "not a number", false),
        row(.numericLessEqual, ["5"], "4", true),
        row(.numericLessEqual, ["5"], "5", true),
        row(.numericLessEqual, ["5"], "6", false),
        row(.numericLessEqual, ["5"], "not a number", false),
        row(.numericEqual, ["5"], "5", true),
        row(.numericEqual, ["5"], "6", false),
        row(.numericEqual, ["5"], "not a number", false),
        row(.numericNotEqual, ["5"], "6", true),
        row(.numericNotEqual, ["5"], "5", false),
        row(.numericNotEqual, ["5"], "not a number", false),
        row(.numericGreaterThan, ["5"], "6", true),
        row(.numericGreaterThan, ["5"], "5", false),
        row(.numericGreaterThan, ["5"], "4", false),
        row(.numericGreaterThan, ["5"], "not a number", false),
        row(.numericGreaterEqual, ["5"], "6", true),
        row(.numericGreaterEqual, ["5"], "5", true),
        row(.numericGreaterEqual, ["5"], .number(5.0), true),
        row(.numericGreaterEqual, ["5.0"], .number(5.0), true),
        row(.numericGreaterEqual, ["5"], "4", false),
        row(.numericGreaterEqual, ["5"], "not a number", false),

        row(.versionLessThan, ["5.12.3"], "5.11.9", true),
        row(.versionLessThan, ["5.12.3"], "5.12", true),
        row(.versionLessThan, ["5.12.3"], "5", true),
        row(.versionLessThan, ["5.12.3"], "5.12.3", false),
        row(.versionLessThan, ["5.12.3"], "5.12.9", false),
        row(.versionLessThan, ["5"], "not a number", false),
        row(.versionLessEqual, ["5.12.3"], "5.11.9", true),
        row(.versionLessEqual, ["5.12.3"], "5.12.3", true),
        row(.versionLessEqual, ["5.12.3"], "5.12.9", false),
        row(.versionLessEqual, ["5.6.7.8.9"], "5.6.7.8.9", true),
        row(.versionLessEqual, ["5"], "not a number", false),
        row(.versionEqual, ["5.12.3"], "5.12.3", true),
        row(.versionEqual, ["5"], .number(5.0), true),
        row(.versionEqual, ["5.0"], .number(5.0), true),
        row(.versionEqual, ["5.12.3"], "5.12.9", false),
        row(.versionEqual, ["5.12.3"], "5.12.3.0.0.0.0", false),
        row(.versionEqual, ["5.6.7.8.9"], "5.6.7.8.9", true),
        row(.versionEqual, ["5.6.7.8.9"], "4.5.6.7.8", false),
        row(.versionEqual, ["5.6.7.8.9.0"], "5.6.7.8.9.0", false),
        row(.versionEqual, ["5"], "not a number", false),
        row(.versionNotEqual, ["5.12.3"], "5.12.9", true),
        row(.versionNotEqual, ["5"], .number(5.0), false),
        row(.versionNotEqual, ["5.0"], .number(5.0), false),
        row(.versionNotEqual, ["5.12.3"], "5.12.3", false),
        row(.versionNotEqual, ["5.12.3"], "5.12.3.0.0.0.0", false),
        row(.versionNotEqual, ["5"], "not a number", false),
        row(.versionGreaterThan, ["5.12.3"], "5.13.9", true),
        row(.versionGreaterThan, ["5.12.3"], "5.13", true),
        row(.versionGreaterThan, ["5.12.3"], "6", true),
        row(.versionGreaterThan, ["5.12.3"], "5.12.3", false),
        row(.versionGreaterThan, ["5.12.3"], "5.11.9", false),
        row(.versionGreaterThan, ["5"], "not a number", false),
        row(.versionGreaterEqual, ["5.12.3"], "5.13.9", true),
        row(.versionGreaterEqual, ["5.12.3"], "5.12.3", true),
        row(.versionGreaterEqual, ["5"], .number(5.0), true),
        row(.versionGreaterEqual, ["5.0"], .number(5.0), true),
        row(.versionGreaterEqual, ["5.12.3"], "5.11.9", false),
        row(.versionGreaterEqual, ["5.6.7.8.9"], "5.6.7.8.9", true),
        row(.versionGreaterEqual, ["5"], "not a number", false),
    ]

    /// 72 base rows plus 66 ws variants.
    static let allRows: [SignalRow] = plainRows + wsRows + wsRows.map(\.padded)

    @Test func tableHasNodesRowCount() {
        #expect(Self.plainRows.count + Self.wsRows.count == 72)
        #expect(Self.allRows.count == 138)
    }

    @Test(arguments: allRows)
    func matchesNode(row: SignalRow) {
        #expect(row.evaluate() == row.expected)
    }
}

@Suite struct NodeVersusPythonTests {
    /// §8.3: where Python and Node disagree; the expected result is Node's.
    static let rows: [SignalRow] = [
        row(.stringExactlyMatches, [""], "", true),
        row(.versionEqual, ["5.12.3"], "5.12.3.0.0.0.0", false),
        row(.versionEqual, ["5.6.7.8.9.0"], "5.6.7.8.9.0", false),
        row(.stringExactlyMatches, ["5"], .number(5.0), true),
        row(.stringExactlyMatches, ["5.0"], .number(5.0), false),
        row(.stringExactlyMatches, ["0"], .number(0), true),
        row(.stringContains, [""], "", true),
        row(.stringContains, ["0"], .number(0), true),
        row(.stringContains, [".0"], .number(5.0), false),
        row(.stringDoesNotContain, ["foo"], "", true),
        row(.stringDoesNotContain, ["x"], .number(0), true),
        row(.stringContainsRegex, ["^$"], "", true),
        row(.stringContainsRegex, ["\\d+"], .number(0), true),
        row(.numericEqual, ["0"], .number(0), true),
        row(.numericEqual, [""], .number(0), true),
        row(.numericEqual, [""], "0", true),
        row(.numericEqual, ["0x10"], .number(16), true),
        row(.numericEqual, ["1_000"], .number(1000), false),
        row(.numericLessThan, ["1"], "", true),
        row(.versionEqual, ["1.0.2"], "1..2", true),
        row(.versionEqual, ["1.-1"], "1.-1", true),
        row(.versionEqual, ["0"], .number(0), true),
        row(.versionEqual, ["0.0"], "", true),
        row(.versionLessThan, ["2.0"], "1.x", true),
        row(.stringExactlyMatches, ["True"], .bool(true), false),
    ]

    /// Rows 2 and 3 also run with white space.
    static let wsRows: [SignalRow] = [rows[1].padded, rows[2].padded]

    /// Rows on which Node and Python agree but a naive Swift port does not.
    static let naivePortRows: [SignalRow] = [
        row(.numericEqual, ["1e3"], .number(1000), true),
        row(.numericEqual, ["Infinity"], "1e400", true),
        row(.numericEqual, ["5"], " 5 ", true),
        row(.numericEqual, ["5"], "", false),
        row(.versionEqual, ["1.2"], " 1.2 ", true),
        row(.versionEqual, ["1.2.x"], "1.2.3", false),
    ]

    @Test(arguments: rows + wsRows + naivePortRows)
    func matchesNode(row: SignalRow) {
        #expect(row.evaluate() == row.expected)
    }
}
