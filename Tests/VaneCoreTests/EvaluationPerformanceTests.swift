import Dispatch
import Foundation
import Testing

@testable import VaneCore

@Suite struct EvaluationPerformanceTests {
    /// A 2,000-rule mix shaped like a large template: mostly equality, lists and numbers, a few regexes.
    static func rules() -> [(CompiledAttributeTest, AttributeValue)] {
        let countries = ["us", "gb", "de", "fr", "es", "it", "nl", "se", "no", "dk", "fi", "pl", "pt", "ie", "at"]
        let kinds: [(AttributeTest, AttributeValue)] = [
            (.equals("ios", negated: false, matching: .caseInsensitive), "iOS"),
            (.equals("1:123:ios:abc", negated: true, matching: .exact), "1:123:ios:abd"),
            (.inList(countries, matching: .caseInsensitive), "AT"),
            (.inList(["en", "es-ES", "pt-BR"], matching: .languageTag), "en_GB"),
            (.string(.contains, ["beta", "rc"]), "2.4.0-rc1"),
            (.string(.exactlyMatches, ["pro", "team"]), " team "),
            (.string(.notContains, ["internal"]), "customer@example.com"),
            (.number(.greaterOrEqual, "5"), "7"),
            (.number(.lessThan, "100.5"), .number(42)),
            (.version(.greaterOrEqual, "2.1.0"), "2.4.1"),
            (.version(.lessThan, "3"), "2.10"),
            (.audience(.inAtLeastOne, ["Purchasers", "Whales"]), .stringList(["Testers", "Whales"])),
            (.audience(.notInAll, ["A", "B"]), .stringList(["A"])),
            (
                .date(.lessThan, DateLiteral(text: "", timeZone: nil, date: Date(timeIntervalSince1970: 2e9))),
                .date(Date())
            ),
            (.number(.equal, "1"), .bool(true)),
            (.equals("5", negated: false, matching: .exact), .number(5)),
            (.version(.equal, "5"), .number(5)),
            (.string(.contains, ["."]), .number(1.5)),
            (.inList(countries, matching: .exact), "zz"),
            (.string(.matches, ["^2\\.[0-9]+"]), "2.4.0"),
        ]
        return (0..<2_000).map { index in
            let (test, value) = kinds[index % kinds.count]
            return (CompiledAttributeTest(test), value)
        }
    }

    @Test func evaluatesTwoThousandRulesQuickly() {
        let rules = Self.rules()
        var best = UInt64.max
        var matches = 0
        for _ in 0..<20 {
            let start = DispatchTime.now().uptimeNanoseconds
            matches = 0
            for (rule, value) in rules where rule.evaluate(value) { matches += 1 }
            best = min(best, DispatchTime.now().uptimeNanoseconds - start)
        }
        #expect(matches == 1_900)
        #if !DEBUG
        // Optimized builds only: a debug build is several times slower and says nothing useful.
        #expect(best < 1_000_000, "best of 20: \(best) ns")
        #endif
        print("2,000 rules: best \(best) ns")
    }
}
