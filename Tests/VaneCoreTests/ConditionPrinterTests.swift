import Foundation
import Testing

@testable import VaneAuthoring
@testable import VaneCore

let sampleAtoms = [
    "true", "false", "app.id == '1:123:ios:abc'", "app.id != 'x'", "device.os == 'ios'", "device.os != 'web'",
    "device.country in ['us', 'gb']", "device.language in ['en-US']", "app.firebaseInstallationId in ['cXXXXXXXXXA']",
    "app.version.>=(['2.1.0'])", "app.build.<(['120'])", "app.version.contains(['beta', 'rc'])",
    "app.build.matches(['^1[0-9]+$'])", "app.audiences.inAtLeastOne(['Purchasers'])",
    "app.importedSegments.notInAll(['a', 'b'])", "app.userProperty['level'] >= 5", "app.customSignal['n'] != -2.50",
    "app.customSignal['plan'].exactlyMatches(['pro'])", "app.userProperty['tier'].notContains(['free'])",
    "version(app.customSignal['v']) >= '1.2.0'", "version(app.userProperty['v']) == '2'",
    "app.firstOpenTimestamp >= ('2022-10-31T14:37:47', 'America/Los_Angeles')",
    "dateTime < dateTime('2017-03-22T13:39:44', 'America/Los_Angeles')", "dateTime >= dateTime('2030-01-01T00:00:00')",
    "percent <= 20", "percent > 0.5", "percent('seed1') between 10 and 20.000001", "percent between 0 and 100",
    #"app.id == 'it\'s a \\ test'"#,
]

@Suite struct ConditionPrinterTests {
    @Test func atomsPrintAsWritten() throws {
        for text in sampleAtoms {
            #expect(try ConditionParser.parse(text).expressionText == text)
        }
    }

    @Test func canonicalFormNormalizesSpacingAndKeywords() throws {
        let expression = try ConditionParser.parse("TRUE&&( percent('s')BETWEEN 1 AND 2|| app.version . >= ( ['1'] ) )")
        #expect(expression.expressionText == "true && (percent('s') between 1 and 2 || app.version.>=(['1']))")
        #expect(
            try ConditionParser.parse("firebaseInstallationId in ['c']").expressionText
                == "app.firebaseInstallationId in ['c']"
        )
        #expect(
            try ConditionParser.parse("device.dateTime < dateTime('2030-01-01T00:00:00')").expressionText
                == "dateTime < dateTime('2030-01-01T00:00:00')"
        )
    }

    @Test func minimalParentheses() throws {
        let cases = [
            ("a || b && c", "a || b && c"),
            ("(a || b) && c", "(a || b) && c"),
            ("(a && b) || c", "a && b || c"),
            ("!(a && b)", "!(a && b)"),
            ("!(a)", "!a"),
            ("!(!a || b)", "!(!a || b)"),
            ("((a)) && ((b || c))", "a && (b || c)"),
        ]
        let atoms = ["a": "true", "b": "device.os == 'ios'", "c": "percent <= 5"]
        func substitute(_ text: String) -> String {
            text.map { atoms[String($0)] ?? String($0) }.joined()
        }
        for (input, output) in cases {
            #expect(try ConditionParser.parse(substitute(input)).expressionText == substitute(output))
        }
    }

    @Test func roundTripsRandomTrees() throws {
        var generator = SystemRandomNumberGenerator()
        func randomText(depth: Int) -> String {
            guard depth > 0, Int.random(in: 0..<3, using: &generator) > 0 else {
                return sampleAtoms.randomElement(using: &generator) ?? "true"
            }
            let count = Int.random(in: 2...3, using: &generator)
            let operands = (0..<count).map { _ in randomText(depth: depth - 1) }
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: return "(" + operands.joined(separator: " && ") + ")"
            case 1: return "(" + operands.joined(separator: " || ") + ")"
            case 2: return "!(" + operands.joined(separator: " || ") + ")"
            default: return "!" + operands[0]
            }
        }
        for _ in 0..<500 {
            let expression = try ConditionParser.parse(randomText(depth: 4))
            let printed = expression.expressionText
            #expect(try ConditionParser.parse(printed) == expression, "\(printed)")
        }
    }

    @Test func treesOutsideTheParserStillPrint() {
        #expect(ConditionExpression.and([]).expressionText == "true")
        #expect(ConditionExpression.or([]).expressionText == "false")
        #expect(ConditionExpression.not(.and([.constant(true)])).expressionText == "!true")
        #expect(ConditionExpression.percent(PercentCondition(range: .unknown("UNKNOWN"))).expressionText == "false")
        #expect(rule(.customSignal("n"), .number(.equal, "abc")).expressionText == "app.customSignal['n'] == 'abc'")
    }
}

@Suite struct FirebaseExportTests {
    @Test func andsOfAtomsExport() throws {
        let expression = try ConditionParser.parse(
            "(device.os=='ios' && app.version.>=(['2.0'])) && percent('s') between 0 and 20.5"
        )
        #expect(
            try expression.firebaseExpression().get()
                == "device.os == 'ios' && app.version.>=(['2.0']) && percent('s') between 0 and 20.5"
        )
        #expect(try ConditionExpression.and([]).firebaseExpression().get() == "true")
        #expect(try ConditionExpression.and([.and([]), .constant(false)]).firebaseExpression().get() == "false")
        #expect(try ConditionExpression.or([.constant(true)]).firebaseExpression().get() == "true")
        for atom in sampleAtoms
        where !atom.contains("\\") && atom != "app.id != 'x'" && !atom.hasPrefix("version(app.userProperty") {
            #expect(try ConditionParser.parse(atom).firebaseExpression().get() == atom)
        }
    }

    @Test func reasonsForWhatFirebaseCannotExpress() throws {
        func reasons(_ text: String) throws -> [FirebaseIncompatibility.Reason] {
            try ConditionParser.parse(text).firebaseIncompatibilities.map(\.reason)
        }
        #expect(try reasons("true || false") == [.usesOr])
        #expect(try reasons("!(device.os == 'ios')") == [.usesNot])
        #expect(try reasons(#"app.id == 'a\'b'"#) == [.unquotableString("a'b")])
        #expect(try reasons(#"device.country in ['a\\b']"#) == [.unquotableString(#"a\b"#)])
        #expect(try reasons("app.id != 'x'") == [.unsupportedRule("app.id != 'x'")])
        #expect(
            try reasons("version(app.userProperty['v']) >= '1'") == [
                .unsupportedRule("version(app.userProperty['v']) >= '1'")
            ]
        )
        #expect(try reasons("true && (true || false) && !true") == [.usesOr, .usesNot])
        let unknown = ConditionExpression.percent(PercentCondition(range: .unknown("UNKNOWN")))
        #expect(unknown.firebaseIncompatibilities.map(\.reason) == [.unknownPercentOperator("UNKNOWN")])
        let fractional = ConditionExpression.percent(PercentCondition(range: .lessOrEqual(0.5)))
        #expect(fractional.firebaseIncompatibilities.map(\.reason) == [.invalidPercent(0.5)])
        let inverted = ConditionExpression.percent(PercentCondition(range: .between(lower: 20, upper: 10)))
        #expect(inverted.firebaseIncompatibilities.map(\.reason) == [.invalidPercent(20)])
        #expect(
            rule(.customSignal("n"), .number(.equal, "abc")).firebaseIncompatibilities.map(\.reason) == [
                .nonNumericTarget("abc")
            ]
        )
        #expect(rule(.deviceCountry, .inList([], matching: .caseInsensitive)).firebaseIncompatibilities.count == 1)
    }

    @Test func resultCarriesTheFirstReasonWithAHelpfulMessage() throws {
        let result = try ConditionParser.parse("device.os == 'ios' || device.os == 'android'").firebaseExpression()
        guard case .failure(let incompatibility) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(incompatibility.reason == .usesOr)
        #expect(incompatibility.message.contains("separate conditions that share"))
        #expect(FirebaseIncompatibility(.usesNot).description.contains("!="))
    }
}
