import Foundation
import Testing

@testable import VaneCore

@Suite struct AttributeValueConversionTests {
    private static func utc(_ year: Int, _ month: Int, _ day: Int, _ seconds: Double = 0) -> Date {
        let days = ISO8601Timestamp.daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days) * 86_400 + seconds)
    }

    static let strings: [(AttributeValue, String)] = [
        ("plain", "plain"), (.number(5.0), "5"), (.number(-0.0), "0"), (.number(1e21), "1e+21"),
        (.number(.nan), "NaN"), (.bool(true), "true"), (.bool(false), "false"),
        (.stringList(["a", "b", "c"]), "a,b,c"), (.stringList([]), ""),
        (.date(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00.000Z"),
        (.date(utc(2024, 5, 1, 45_000.25)), "2024-05-01T12:30:00.250Z"),
        (.date(utc(2024, 2, 29, 86_399.999)), "2024-02-29T23:59:59.999Z"),
        (.date(Date(timeIntervalSince1970: -1)), "1969-12-31T23:59:59.000Z"),
        (.date(Date(timeIntervalSince1970: -0.0005)), "1969-12-31T23:59:59.999Z"),
        (.date(utc(10_000, 1, 1)), "+010000-01-01T00:00:00.000Z"),
        (.date(utc(-1, 12, 31)), "-000001-12-31T00:00:00.000Z"),
        (.date(utc(1, 1, 1)), "0001-01-01T00:00:00.000Z"),
        (.date(Date(timeIntervalSince1970: 1e300)), "Invalid Date"),
    ]

    @Test(arguments: strings)
    func convertsToJavaScriptString(value: AttributeValue, expected: String) {
        #expect(value.javaScriptString == expected)
    }

    @Test func convertsToJavaScriptNumber() {
        #expect(AttributeValue.string(" 5 ").javaScriptNumber == 5)
        #expect(AttributeValue.string("").javaScriptNumber == 0)
        #expect(AttributeValue.string("abc").javaScriptNumber.isNaN)
        #expect(AttributeValue.number(2.5).javaScriptNumber == 2.5)
        #expect(AttributeValue.bool(true).javaScriptNumber == 1)
        #expect(AttributeValue.bool(false).javaScriptNumber == 0)
        #expect(AttributeValue.date(Date(timeIntervalSince1970: 1.5)).javaScriptNumber == 1500)
        #expect(AttributeValue.stringList([]).javaScriptNumber == 0)
        #expect(AttributeValue.stringList(["5"]).javaScriptNumber == 5)
        #expect(AttributeValue.stringList(["5", "6"]).javaScriptNumber.isNaN)
    }

    static let dates: [(String, Date?)] = [
        ("2024-05-01T12:30:00Z", utc(2024, 5, 1, 45_000)),
        ("2024-05-01T12:30:00", utc(2024, 5, 1, 45_000)),
        ("2024-05-01t12:30:00z", utc(2024, 5, 1, 45_000)),
        ("2024-05-01 12:30", utc(2024, 5, 1, 45_000)),
        ("2024-05-01T12:30:00.250Z", utc(2024, 5, 1, 45_000.25)),
        ("2024-05-01T12:30:00,5", utc(2024, 5, 1, 45_000.5)),
        ("2024-05-01T14:30:00+02:00", utc(2024, 5, 1, 45_000)),
        ("2024-05-01T14:30:00+0200", utc(2024, 5, 1, 45_000)),
        ("2024-05-01T10:30:00-02", utc(2024, 5, 1, 45_000)),
        ("2024-05-01", utc(2024, 5, 1)),
        ("2024-02-29", utc(2024, 2, 29)),
        ("1969-12-31T23:59:59Z", Date(timeIntervalSince1970: -1)),
        ("2023-02-29", nil), ("2024-13-01", nil), ("2024-05-01T24:00:00", nil), ("2024-05-01T12:60", nil),
        ("2024-05-01T12:30:00.Z", nil), ("2024-05-01T12:30:00Zx", nil), ("2024-05-01T12:30:00+2", nil),
        ("2024-05-01Z", nil), ("24-05-01", nil), ("garbage", nil), ("", nil), (" 2024-05-01", nil),
    ]

    @Test(arguments: dates)
    func parsesISO8601Strings(text: String, expected: Date?) {
        #expect(AttributeValue.string(text).dateValue == expected, "\(text)")
    }

    @Test func convertsOtherValuesToDates() {
        let date = Date(timeIntervalSince1970: 1_714_566_600)
        #expect(AttributeValue.date(date).dateValue == date)
        #expect(AttributeValue.number(1_714_566_600).dateValue == date)
        #expect(AttributeValue.number(.nan).dateValue == nil)
        #expect(AttributeValue.bool(true).dateValue == nil)
        #expect(AttributeValue.stringList(["2024-05-01"]).dateValue == nil)
    }

    @Test func convertsToStringLists() {
        #expect(AttributeValue.stringList(["a", "b"]).stringListValue == ["a", "b"])
        #expect(AttributeValue.string("a").stringListValue == ["a"])
        #expect(AttributeValue.number(1).stringListValue == nil)
        #expect(AttributeValue.bool(true).stringListValue == nil)
        #expect(AttributeValue.date(Date()).stringListValue == nil)
    }
}
