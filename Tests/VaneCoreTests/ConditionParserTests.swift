import Foundation
import Testing

@testable import VaneCore

func rule(_ subject: ConditionSubject, _ test: AttributeTest) -> ConditionExpression {
    .attribute(AttributeCondition(subject: subject, test: test))
}

func rule(_ element: ConditionElement, _ test: AttributeTest) -> ConditionExpression {
    rule(.element(element), test)
}

func syntaxError(_ expression: String, name: String? = nil) -> ConditionSyntaxError? {
    do {
        _ = try ConditionParser.parse(expression, conditionName: name)
        return nil
    } catch {
        return error
    }
}

func utcDate(
    _ year: Int,
    _ month: Int,
    _ day: Int,
    _ hour: Int,
    _ minute: Int,
    _ second: Int,
    zone: String = "UTC"
)
    -> Date?
{
    var calendar = Calendar(identifier: .gregorian)
    guard let timeZone = TimeZone(identifier: zone) else { return nil }
    calendar.timeZone = timeZone
    return calendar.date(
        from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    )
}

@Suite struct ConditionParserElementTests {
    @Test func constantsAreCaseInsensitive() throws {
        #expect(try ConditionParser.parse("true") == .constant(true))
        #expect(try ConditionParser.parse("  FALSE ") == .constant(false))
        #expect(try ConditionParser.parse("True") == .constant(true))
    }

    @Test func appId() throws {
        #expect(
            try ConditionParser.parse("app.id == '1:123:ios:abc'")
                == rule(.appId, .equals("1:123:ios:abc", negated: false, matching: .exact))
        )
        #expect(try ConditionParser.parse("app.id!='x'") == rule(.appId, .equals("x", negated: true, matching: .exact)))
    }

    @Test func deviceOS() throws {
        #expect(
            try ConditionParser.parse("device.os == 'ios'")
                == rule(.deviceOS, .equals("ios", negated: false, matching: .caseInsensitive))
        )
        #expect(
            try ConditionParser.parse("device.os != 'android'")
                == rule(.deviceOS, .equals("android", negated: true, matching: .caseInsensitive))
        )
    }

    @Test func countryLanguageAndInstallationId() throws {
        #expect(
            try ConditionParser.parse("device.country in ['us', 'gb']")
                == rule(.deviceCountry, .inList(["us", "gb"], matching: .caseInsensitive))
        )
        #expect(
            try ConditionParser.parse("device.language in ['en-US','es-ES']")
                == rule(.deviceLanguage, .inList(["en-US", "es-ES"], matching: .languageTag))
        )
        let fid = rule(.appFirebaseInstallationId, .inList(["cXXXXXXXXXA"], matching: .exact))
        #expect(try ConditionParser.parse("app.firebaseInstallationId in ['cXXXXXXXXXA']") == fid)
        #expect(try ConditionParser.parse("firebaseInstallationId in ['cXXXXXXXXXA']") == fid)
    }

    @Test func versionAndBuildComparisons() throws {
        for comparison in ComparisonOperator.allCases {
            #expect(
                try ConditionParser.parse("app.version.\(comparison.rawValue)(['2.1.0'])")
                    == rule(.appVersion, .version(comparison, "2.1.0"))
            )
            #expect(
                try ConditionParser.parse("app.build.\(comparison.rawValue)(['120'])")
                    == rule(.appBuild, .version(comparison, "120"))
            )
        }
        // Vane is lenient about whitespace that Firebase rejects.
        #expect(
            try ConditionParser.parse("app.version. >= ( [ '1.0.0' ] )")
                == rule(.appVersion, .version(.greaterOrEqual, "1.0.0"))
        )
    }

    @Test func stringMethods() throws {
        for method in StringOperator.allCases {
            #expect(
                try ConditionParser.parse("app.version.\(method.rawValue)(['beta', 'rc'])")
                    == rule(.appVersion, .string(method, ["beta", "rc"]))
            )
            #expect(
                try ConditionParser.parse("app.build.\(method.rawValue)(['1'])")
                    == rule(.appBuild, .string(method, ["1"]))
            )
            #expect(
                try ConditionParser.parse("app.userProperty['tier'].\(method.rawValue)(['gold'])")
                    == rule(.userProperty("tier"), .string(method, ["gold"]))
            )
            #expect(
                try ConditionParser.parse("app.customSignal['plan'] .\(method.rawValue)(['pro'])")
                    == rule(.customSignal("plan"), .string(method, ["pro"]))
            )
        }
    }

    @Test func audiences() throws {
        for method in AudienceOperator.allCases {
            #expect(
                try ConditionParser.parse("app.audiences.\(method.rawValue)(['Purchasers', 'VIP'])")
                    == rule(.appAudiences, .audience(method, ["Purchasers", "VIP"]))
            )
            #expect(
                try ConditionParser.parse("app.importedSegments.\(method.rawValue)(['s'])")
                    == rule(.appImportedSegments, .audience(method, ["s"]))
            )
        }
    }

    @Test func keyedNumericComparisonsKeepTheNumberText() throws {
        for comparison in ComparisonOperator.allCases {
            #expect(
                try ConditionParser.parse("app.customSignal['n'] \(comparison.rawValue) 5")
                    == rule(.customSignal("n"), .number(comparison, "5"))
            )
        }
        #expect(
            try ConditionParser.parse("app.userProperty['level']>=-2.50")
                == rule(.userProperty("level"), .number(.greaterOrEqual, "-2.50"))
        )
        #expect(
            try ConditionParser.parse("app.customSignal['n'] < +007")
                == rule(.customSignal("n"), .number(.lessThan, "+007"))
        )
    }

    @Test func semanticVersionFunction() throws {
        #expect(
            try ConditionParser.parse("version(app.customSignal['v']) >= '1.2.0'")
                == rule(.customSignal("v"), .version(.greaterOrEqual, "1.2.0"))
        )
        #expect(
            try ConditionParser.parse("version( app.userProperty['v'] )!='2'")
                == rule(.userProperty("v"), .version(.notEqual, "2"))
        )
    }

    @Test func firstOpenTimestamp() throws {
        let expression = try ConditionParser.parse(
            "app.firstOpenTimestamp >= ('2022-10-31T14:37:47', 'America/Los_Angeles')"
        )
        let date = try #require(utcDate(2022, 10, 31, 21, 37, 47))
        let literal = DateLiteral(text: "2022-10-31T14:37:47", timeZone: "America/Los_Angeles", date: date)
        #expect(expression == rule(.appFirstOpenTimestamp, .date(.greaterOrEqual, literal)))
    }

    @Test func dateTimeWithAndWithoutZone() throws {
        let pacific = try ConditionParser.parse("dateTime < dateTime('2017-03-22T13:39:44', 'America/Los_Angeles')")
        let pacificDate = try #require(utcDate(2017, 3, 22, 20, 39, 44))
        #expect(
            pacific
                == rule(
                    .dateTime,
                    .date(
                        .lessThan,
                        DateLiteral(text: "2017-03-22T13:39:44", timeZone: "America/Los_Angeles", date: pacificDate)
                    )
                )
        )
        let utc = try ConditionParser.parse("device.dateTime >= dateTime('2030-01-01T00:00:00')")
        let utcValue = try #require(utcDate(2030, 1, 1, 0, 0, 0))
        #expect(
            utc
                == rule(
                    .dateTime,
                    .date(.greaterOrEqual, DateLiteral(text: "2030-01-01T00:00:00", timeZone: nil, date: utcValue))
                )
        )
        #expect(try ConditionParser.parse("dateTime >= device.dateTime('2030-01-01T00:00:00')") == utc)
    }

    @Test func percentForms() throws {
        #expect(
            try ConditionParser.parse("percent <= 20") == .percent(PercentCondition(range: .lessOrEqual(20_000_000)))
        )
        #expect(try ConditionParser.parse("PERCENT > 0.000001") == .percent(PercentCondition(range: .greaterThan(1))))
        #expect(
            try ConditionParser.parse("percent between 10 and 20.5")
                == .percent(PercentCondition(range: .between(lower: 10_000_000, upper: 20_500_000)))
        )
        #expect(
            try ConditionParser.parse("percent('seed1') Between 0 AND 100")
                == .percent(PercentCondition(seed: "seed1", range: .between(lower: 0, upper: 100_000_000)))
        )
        #expect(
            try ConditionParser.parse("percent between 5 and 5")
                == .percent(PercentCondition(range: .between(lower: 5_000_000, upper: 5_000_000)))
        )
        #expect(
            try ConditionParser.parse("percent<=33.333333")
                == .percent(PercentCondition(range: .lessOrEqual(33_333_333)))
        )
    }

    @Test func stringEscapes() throws {
        #expect(
            try ConditionParser.parse(#"app.id == 'it\'s \\ ok'"#)
                == rule(.appId, .equals(#"it's \ ok"#, negated: false, matching: .exact))
        )
        #expect(
            try ConditionParser.parse("app.id == ''") == rule(.appId, .equals("", negated: false, matching: .exact))
        )
    }
}

@Suite struct ConditionParserCombinatorTests {
    let a = rule(.deviceOS, .equals("ios", negated: false, matching: .caseInsensitive))
    let b = ConditionExpression.percent(PercentCondition(range: .lessOrEqual(20_000_000)))
    let c = rule(.deviceCountry, .inList(["us"], matching: .caseInsensitive))
    let d = ConditionExpression.constant(true)
    let ta = "device.os == 'ios'"
    let tb = "percent <= 20"
    let tc = "device.country in ['us']"
    let td = "true"

    @Test func andChainsFlatten() throws {
        #expect(try ConditionParser.parse("\(ta) && \(tb) && \(tc)") == .and([a, b, c]))
        #expect(try ConditionParser.parse("(\(ta) && \(tb)) && \(tc)") == .and([a, b, c]))
        #expect(try ConditionParser.parse("\(ta)&&(\(tb)&&\(tc))") == .and([a, b, c]))
        #expect(try ConditionParser.parse("((\(ta)))") == a)
    }

    @Test func precedenceIsNotThenAndThenOr() throws {
        #expect(try ConditionParser.parse("\(ta) || \(tb) && \(tc)") == .or([a, .and([b, c])]))
        #expect(try ConditionParser.parse("\(ta) && \(tb) || \(tc) && \(td)") == .or([.and([a, b]), .and([c, d])]))
        #expect(try ConditionParser.parse("(\(ta) || \(tb)) && \(tc)") == .and([.or([a, b]), c]))
        #expect(try ConditionParser.parse("!\(ta) && \(tb)") == .and([.not(a), b]))
        #expect(try ConditionParser.parse("!(\(ta) && \(tb))") == .not(.and([a, b])))
        #expect(try ConditionParser.parse("!!\(ta)") == .not(.not(a)))
        #expect(try ConditionParser.parse("\(ta) || (\(tb) || \(tc)) || \(td)") == .or([a, b, c, d]))
    }

    @Test func nestingUpToTheLimitWorks() throws {
        let depth = ConditionParser.maximumNestingDepth
        let nested = String(repeating: "(", count: depth) + "true" + String(repeating: ")", count: depth)
        #expect(try ConditionParser.parse(nested) == .constant(true))
        let negated = String(repeating: "!", count: depth) + "true"
        #expect(throws: Never.self) { try ConditionParser.parse(negated) }
    }
}

@Suite struct ConditionParserErrorTests {
    func expectError(
        _ expression: String,
        column: Int,
        expected: String,
        found: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = syntaxError(expression) else {
            Issue.record("\(expression) parsed", sourceLocation: sourceLocation)
            return
        }
        #expect(error.column == column, "\(error)", sourceLocation: sourceLocation)
        #expect(error.expected.contains(expected), "\(error)", sourceLocation: sourceLocation)
        if let found { #expect(error.found == found, "\(error)", sourceLocation: sourceLocation) }
        #expect(error.expression == expression, sourceLocation: sourceLocation)
    }

    @Test func descriptionNamesConditionColumnExpectedAndFound() {
        let error = syntaxError("device.os == ios", name: "ios_us")
        #expect(
            error?.description == "condition \"ios_us\", column 14: expected a string in single quotes, found \"ios\""
        )
        #expect(syntaxError("device.os == ios")?.description.hasPrefix("column 14: expected") == true)
    }

    @Test func missingQuote() {
        expectError(
            "device.os == 'ios",
            column: 18,
            expected: "a single quote (') to close the string that starts at column 14",
            found: "the end of the condition"
        )
        expectError("device.os == ios'", column: 14, expected: "a string in single quotes", found: "\"ios\"")
        expectError(#"app.id == 'a\b'"#, column: 13, expected: #"\' or \\"#)
    }

    @Test func unknownElements() {
        expectError("device.model == 'x'", column: 8, expected: "one of device.os", found: "\"model\"")
        expectError("app.name == 'x'", column: 5, expected: "one of app.id")
        expectError("user.id == 'x'", column: 1, expected: "a condition element")
        expectError("'ios'", column: 1, expected: "a condition such as")
        expectError("", column: 1, expected: "a condition such as", found: "the end of the condition")
    }

    @Test func versionComparisonNeedsMethodSyntax() {
        expectError(
            "app.version >= '2.61.0'",
            column: 13,
            expected: "\".\" and a method, as in app.version.>=(['2.0.0'])",
            found: "\">=\""
        )
        expectError("app.version.>=(['1', '2'])", column: 20, expected: "exactly one version", found: "\",\"")
        expectError("app.version.startsWith(['1'])", column: 13, expected: "a comparison (==")
    }

    @Test func lists() {
        expectError("device.country in []", column: 20, expected: "a list needs at least one", found: "\"]\"")
        expectError("device.country in ['us',]", column: 25, expected: "a string in single quotes after \",\"")
        expectError("device.country in 'us'", column: 19, expected: "\"[\" and a list of strings")
        expectError("device.country == 'us'", column: 16, expected: "\"in\" and a list")
        expectError("device.country in ['us' 'gb']", column: 25, expected: "\",\" or \"]\"")
    }

    @Test func combinators() {
        expectError("true &&", column: 8, expected: "a condition after \"&&\"", found: "the end of the condition")
        expectError("true && && false", column: 9, expected: "a condition after \"&&\"")
        expectError("true ||", column: 8, expected: "a condition after \"||\"")
        expectError("(true", column: 6, expected: "\")\" to close the \"(\" at column 1")
        expectError("true)", column: 5, expected: "\"&&\", \"||\" or the end of the condition")
        expectError("true false", column: 6, expected: "\"&&\", \"||\" or the end")
        expectError("true & false", column: 6, expected: "\"&&\", \"||\" or the end", found: "\"&\"")
        expectError("!", column: 2, expected: "a condition after \"!\"")
    }

    @Test func badPercents() {
        expectError("percent <= 101", column: 12, expected: "a percentage from 0 to 100", found: "\"101\"")
        expectError("percent <= -1", column: 12, expected: "a percentage from 0 to 100")
        expectError("percent <= 1.1234567", column: 12, expected: "at most 6 decimals")
        expectError("percent <= 'x'", column: 12, expected: "a percentage")
        expectError("percent >= 5", column: 9, expected: "\"<=\", \">\" or \"between\"")
        expectError(
            "percent between 20 and 10",
            column: 24,
            expected: "an upper bound no smaller than the lower bound",
            found: "\"10\""
        )
        expectError("percent between 10 or 20", column: 20, expected: "\"and\"")
        expectError("percent(seed) <= 5", column: 9, expected: "a seed in single quotes")
        expectError("percent <= 100000000000000000000000", column: 12, expected: "a percentage")
    }

    @Test func dates() {
        expectError(
            "dateTime < dateTime('2017-03-22T13:39:44', 'Mars/Olympus')",
            column: 44,
            expected: "a known time zone",
            found: "'Mars/Olympus'"
        )
        expectError(
            "dateTime < dateTime('2017-02-30T13:39:44')",
            column: 21,
            expected: "a date-time 'YYYY-MM-DDTHH:MM:SS'"
        )
        expectError("dateTime < dateTime('2017-03-22 13:39:44')", column: 21, expected: "a date-time")
        expectError("dateTime < dateTime('2017-03-22T24:00:00')", column: 21, expected: "a date-time")
        expectError("app.firstOpenTimestamp >= '2022-10-31T14:37:47'", column: 27, expected: "\"(\" and a date")
        expectError("dateTime < ('2017-03-22T13:39:44')", column: 12, expected: "dateTime('YYYY")
        expectError("dateTime in ['x']", column: 10, expected: "a comparison")
    }

    @Test func badRegex() {
        expectError(
            "app.customSignal['k'].matches(['ok', '[a-'])",
            column: 38,
            expected: "a regular expression that compiles",
            found: "'[a-'"
        )
        #expect(syntaxError("app.customSignal['k'].matches(['^a.*b$'])") == nil)
    }

    @Test func keyedErrors() {
        expectError(
            "app.customSignal['plan'] == 'pro'",
            column: 29,
            expected: "app.customSignal['plan'].exactlyMatches(['pro'])",
            found: "'pro'"
        )
        expectError("app.customSignal[plan] == 1", column: 18, expected: "a string in single quotes")
        expectError("app.customSignal['k'].>=(['1'])", column: 23, expected: "a string method")
        expectError("app.userProperty['k']", column: 22, expected: "a comparison with a number")
        expectError("version(app.customSignal['v']) >= 1.2", column: 35, expected: "a version in single quotes")
        expectError("version(device.os) >= '1'", column: 9, expected: "app.customSignal['…']")
    }

    @Test func tooDeepNestingIsAnErrorNotACrash() {
        let depth = ConditionParser.maximumNestingDepth
        expectError(String(repeating: "(", count: depth + 1) + "true", column: depth + 1, expected: "at most 64 nested")
        expectError(String(repeating: "!", count: 100_000) + "true", column: depth + 1, expected: "at most 64 nested")
        expectError(String(repeating: "!(", count: 40) + "true", column: 2 * 32 + 1, expected: "at most 64 nested")
    }

    @Test func garbageNeverCrashes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("app.version device.os percent()[]'\\,&&||!<=>=== in true 0123 between and 🙂é\n\t")
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<60, using: &generator)
            let text = String((0..<length).compactMap { _ in alphabet.randomElement(using: &generator) })
            if let error = syntaxError(text) {
                #expect(error.column >= 1 && error.column <= text.count + 1, "\(text): \(error)")
            }
        }
    }

    @Test func megabyteInputsFinish() {
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            let chain = Array(repeating: "device.os == 'ios'", count: 55_000).joined(separator: " && ")
            #expect(syntaxError(chain) == nil)
            let string = "app.id == '" + String(repeating: "x", count: 1_000_000)
            #expect(syntaxError(string)?.column == 1_000_012)
            let identifier = String(repeating: "a", count: 1_000_000)
            #expect(syntaxError(identifier)?.found.hasSuffix("…\"") == true)
            let spaces = String(repeating: " ", count: 1_000_000) + "true &&"
            #expect(syntaxError(spaces)?.column == 1_000_008)
            let parens = String(repeating: "(", count: 1_000_000)
            #expect(syntaxError(parens)?.column == 65)
        }
        #expect(elapsed < .seconds(30))
    }
}
