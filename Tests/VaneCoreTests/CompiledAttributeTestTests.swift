import Foundation
import Testing

@testable import VaneAuthoring
@testable import VaneCore

private func check(_ test: AttributeTest, _ value: AttributeValue) -> Bool {
    CompiledAttributeTest(test).evaluate(value)
}

@Suite struct EqualityMatchingTests {
    @Test func exactEqualityComparesCodeUnits() {
        #expect(check(.equals("ios", negated: false, matching: .exact), "ios"))
        #expect(!check(.equals("ios", negated: false, matching: .exact), "iOS"))
        #expect(!check(.equals("ios", negated: false, matching: .exact), "ios "))
        #expect(check(.equals("ios", negated: true, matching: .exact), "android"))
        #expect(!check(.equals("ios", negated: true, matching: .exact), "ios"))
        // JavaScript compares code units: precomposed é is not e + combining acute.
        #expect(!check(.equals("caf\u{E9}", negated: false, matching: .exact), "cafe\u{301}"))
        #expect(check(.equals("", negated: false, matching: .exact), ""))
    }

    @Test func equalityReadsValuesAsJavaScriptStrings() {
        #expect(check(.equals("5", negated: false, matching: .exact), .number(5)))
        #expect(!check(.equals("5.0", negated: false, matching: .exact), .number(5)))
        #expect(check(.equals("true", negated: false, matching: .exact), .bool(true)))
        #expect(check(.equals("a,b", negated: false, matching: .exact), .stringList(["a", "b"])))
        #expect(check(.equals("TRUE", negated: false, matching: .caseInsensitive), .bool(true)))
    }

    @Test func caseInsensitiveEqualityFoldsASCIIOnly() {
        let test = AttributeTest.equals("iOS", negated: false, matching: .caseInsensitive)
        #expect(check(test, "ios"))
        #expect(check(test, "IOS"))
        #expect(!check(test, "ios1"))
        #expect(!check(test, "io"))
        #expect(!check(.equals("\u{C9}", negated: false, matching: .caseInsensitive), "\u{E9}"))
        #expect(!check(.equals("@", negated: false, matching: .caseInsensitive), "`"))
        #expect(check(.equals("ios", negated: true, matching: .caseInsensitive), "android"))
        #expect(!check(.equals("ios", negated: true, matching: .caseInsensitive), "IOS"))
    }

    @Test func inListMatchesAnyElement() {
        let countries = AttributeTest.inList(["us", "GB"], matching: .caseInsensitive)
        #expect(check(countries, "gb"))
        #expect(check(countries, "Us"))
        #expect(!check(countries, "de"))
        #expect(!check(.inList(["us"], matching: .exact), "US"))
        #expect(check(.inList(["c1", "c2"], matching: .exact), "c2"))
        #expect(!check(.inList([], matching: .exact), ""))
    }

    @Test func inListHandlesLongLists() {
        let codes = (0..<500).map { "code\($0)" }
        let test = CompiledAttributeTest(.inList(codes, matching: .caseInsensitive))
        for code in codes { #expect(test.evaluate(.string(code.uppercased()))) }
        #expect(!test.evaluate("code500"))
    }
}

@Suite struct LanguageTagMatchingTests {
    static let cases: [(targets: [String], value: String, expected: Bool)] = [
        (["en"], "en", true), (["en"], "EN", true), (["en"], "en-US", true), (["en"], "en-gb", true),
        (["en"], "en_GB", true), (["en"], "en-Latn-US", true), (["en"], "eng", false), (["en"], "e", false),
        (["en"], "fr-FR", false), (["en"], "", false), (["en"], "-en", false),
        (["en-US"], "en-us", true), (["en-US"], "en_US", true), (["en-US"], "EN-us", true),
        (["en-US"], "en", false), (["en-US"], "en-GB", false), (["en_US"], "en-US", true),
        (["es-ES", "en"], "en-AU", true), (["es-ES", "en"], "es-MX", false), (["es-ES", "en"], "es-es", true),
        (["zh-Hant"], "zh-hant", true), (["pt"], "pt-BR", true), (["pt"], "pt_br", true),
    ]

    @Test(arguments: cases)
    func matchesLanguageTags(targets: [String], value: String, expected: Bool) {
        #expect(check(.inList(targets, matching: .languageTag), .string(value)) == expected)
        if targets.count == 1 {
            #expect(check(.equals(targets[0], negated: false, matching: .languageTag), .string(value)) == expected)
            #expect(check(.equals(targets[0], negated: true, matching: .languageTag), .string(value)) != expected)
        }
    }
}

@Suite struct StringOperatorTests {
    @Test func containsSearchesCodeUnits() {
        #expect(check(.string(.contains, ["\u{F6}"]), "K\u{F6}ln"))
        #expect(check(.string(.contains, ["ln"]), "K\u{F6}ln"))
        #expect(!check(.string(.contains, ["FOO"]), "foobar"))
        #expect(check(.string(.contains, ["bar"]), "foobar"))
        #expect(!check(.string(.contains, ["foobarbaz"]), "foobar"))
        #expect(check(.string(.contains, ["x", ""]), "anything"))
        #expect(!check(.string(.notContains, ["x", ""]), "anything"))
        #expect(check(.string(.contains, ["aab"]), "aaab"))
        #expect(check(.string(.contains, ["ru"]), .bool(true)))
        #expect(check(.string(.contains, ["e+21"]), .number(1e21)))
    }

    @Test func exactlyMatchesTrimsJavaScriptWhiteSpace() {
        #expect(check(.string(.exactlyMatches, ["\u{A0}pro\u{3000}"]), "\u{FEFF}pro\n"))
        #expect(!check(.string(.exactlyMatches, ["pro"]), "p ro"))
        #expect(!check(.string(.exactlyMatches, ["pro"]), "\u{200B}pro"))
        #expect(!check(.string(.exactlyMatches, ["Pro"]), "pro"))
    }

    @Test func matchesSearchesUnanchored() {
        #expect(check(.string(.matches, ["o+b"]), "foobar"))
        #expect(!check(.string(.matches, ["^o+b"]), "foobar"))
        #expect(check(.string(.matches, ["^\\d+\\.\\d+$"]), .number(1.5)))
        #expect(check(.string(.matches, ["\u{F6}l"]), "K\u{F6}ln"))
        #expect(check(.string(.matches, ["n$"]), "K\u{1F600}ln"))
        #expect(!check(.string(.matches, ["  bar   "]), " bar "))
    }

    /// A client chooses the text a pattern runs over: a catastrophic pattern is stopped (issue
    /// #13: `(a+)+$` over 40 `a`s and a `!` once held a fetch for 14.5 s), and text beyond the
    /// limit is not examined.
    @Test func matchingIsBoundedInTimeAndLength() {
        #expect(!check(.string(.matches, ["(a+)+$"]), .string(String(repeating: "a", count: 40) + "!")))
        #expect(check(.string(.matches, ["(a+)+$"]), .string(String(repeating: "a", count: 40))))
        let limit = SendableRegex.maximumTextLength
        #expect(check(.string(.matches, ["b$"]), .string(String(repeating: "a", count: limit - 1) + "b")))
        #expect(!check(.string(.matches, ["b$"]), .string(String(repeating: "a", count: limit) + "b")))
    }

    @Test func nestedRepetitionIsRecognized() {
        for pattern in ["(a+)+$", "^(\\w+\\s?)*$", "(x+x+)+y", "((ab)*c)+", "(a{2,})*", "(?:a*b)+"] {
            #expect(CatastrophicBacktracking.isLikely(in: pattern), "\(pattern)")
        }
        for pattern in ["^[a-z]+$", "(ab)+", "(a|b)+", "(\\d{1,3}\\.){3}\\d+", "\\(a+\\)+", "[(a+)]+", "(a)+b+"] {
            #expect(!CatastrophicBacktracking.isLikely(in: pattern), "\(pattern)")
        }
    }

    @Test func emptyRegexMatchesAndInvalidRegexNever() {
        #expect(check(.string(.matches, [""]), "anything"))
        #expect(!check(.string(.matches, ["("]), "("))
        #expect(check(.string(.matches, ["(", "\\("]), "("))
    }
}

@Suite struct NumberAndVersionRuleTests {
    @Test func numbersReadValuesThroughNumber() {
        #expect(check(.number(.equal, "1"), .bool(true)))
        #expect(check(.number(.equal, "0"), .bool(false)))
        #expect(check(.number(.greaterThan, "0"), .date(Date(timeIntervalSince1970: 1))))
        #expect(check(.number(.equal, "5"), .stringList(["5"])))
        #expect(!check(.number(.notEqual, "5"), .stringList(["5", "6"])))
        #expect(!check(.number(.notEqual, "abc"), .number(1)))
        #expect(check(.number(.equal, "-0"), .number(0)))
        #expect(check(.number(.lessThan, "-Infinity"), .number(-1e308)) == false)
        #expect(check(.number(.greaterThan, "0b101"), " 6 "))
    }

    @Test func versionsReadValuesAsJavaScriptStrings() {
        #expect(check(.version(.greaterOrEqual, "2.1.0"), "2.1"))
        #expect(check(.version(.lessThan, "2.10"), "2.9"))
        #expect(check(.version(.equal, "1.5"), .number(1.5)))
        #expect(!check(.version(.notEqual, "1.2.3.4.5.6"), "1"))
        #expect(!check(.version(.equal, "1"), .bool(true)))
    }
}

@Suite struct AudienceRuleTests {
    static let member: AttributeValue = .stringList(["Purchasers", "Testers"])

    static let cases: [(AudienceOperator, [String], AttributeValue, Bool)] = [
        (.inAtLeastOne, ["Purchasers", "X"], member, true),
        (.inAtLeastOne, ["X"], member, false),
        (.inAtLeastOne, ["purchasers"], member, false),
        (.notInAtLeastOne, ["X", "Y"], member, true),
        (.notInAtLeastOne, ["X", "Testers"], member, false),
        (.inAll, ["Purchasers", "Testers"], member, true),
        (.inAll, ["Testers", "Testers"], member, true),
        (.inAll, ["Purchasers", "X"], member, false),
        (.notInAll, ["Purchasers", "X"], member, true),
        (.notInAll, ["Purchasers", "Testers"], member, false),
        (.inAtLeastOne, ["a"], .stringList([]), false),
        (.notInAtLeastOne, ["a"], .stringList([]), true),
        (.inAll, ["a"], .stringList([]), false),
        (.notInAll, ["a"], .stringList([]), true),
        (.inAtLeastOne, ["Beta"], "Beta", true),
        (.inAll, ["Beta", "Gamma"], "Beta", false),
        (.inAtLeastOne, ["1"], .number(1), false),
        (.notInAtLeastOne, ["1"], .number(1), false),
        (.notInAll, ["true"], .bool(true), false),
    ]

    @Test(arguments: cases)
    func appliesAudienceOperators(op: AudienceOperator, targets: [String], value: AttributeValue, expected: Bool) {
        #expect(check(.audience(op, targets), value) == expected)
    }
}

@Suite struct DateRuleTests {
    static let cutoff = DateLiteral(
        text: "2030-01-01T00:00:00",
        timeZone: nil,
        date: Date(timeIntervalSince1970: 1_893_456_000)
    )

    static let cases: [(ComparisonOperator, AttributeValue, Bool)] = [
        (.lessThan, .date(Date(timeIntervalSince1970: 1_893_455_999)), true),
        (.lessThan, .date(Date(timeIntervalSince1970: 1_893_456_000)), false),
        (.lessOrEqual, .date(Date(timeIntervalSince1970: 1_893_456_000)), true),
        (.equal, .date(Date(timeIntervalSince1970: 1_893_456_000)), true),
        (.notEqual, .date(Date(timeIntervalSince1970: 1_893_456_000)), false),
        (.greaterOrEqual, "2030-01-01T00:00:00Z", true),
        (.greaterThan, "2030-01-01T00:00:00.001", true),
        (.greaterThan, "2029-12-31T23:59:59", false),
        (.lessThan, "2030-01-01T01:00:00+02:00", true),
        (.equal, .number(1_893_456_000), true),
        (.lessThan, .number(0), true),
        (.lessThan, "not a date", false),
        (.notEqual, "not a date", false),
        (.notEqual, .bool(true), false),
        (.lessThan, .stringList(["2020-01-01"]), false),
    ]

    @Test(arguments: cases)
    func comparesDates(op: ComparisonOperator, value: AttributeValue, expected: Bool) {
        #expect(check(.date(op, Self.cutoff), value) == expected)
    }
}
