import Foundation

/// Turns `'YYYY-MM-DDTHH:MM:SS'` and an optional Olson zone into a ``DateLiteral``.
///
/// Uses only `TimeZone(identifier:)`, `DateComponents` and a Gregorian `Calendar`, which
/// behave alike on Linux and Apple platforms.
enum DateLiteralParser {
    static func literal(
        text: (value: String, token: ConditionToken),
        zone: (value: String, token: ConditionToken)?
    ) throws(ConditionParseFailure) -> DateLiteral {
        guard let components = dateComponents(text.value) else {
            throw ConditionParseFailure(
                column: text.token.column,
                expected: "a date-time 'YYYY-MM-DDTHH:MM:SS' that exists",
                found: text.token.foundDescription
            )
        }
        let timeZone: TimeZone?
        if let zone {
            timeZone = zone.value.isEmpty ? nil : TimeZone(identifier: zone.value)
            if timeZone == nil {
                throw ConditionParseFailure(
                    column: zone.token.column,
                    expected: "a known time zone name, such as 'America/Los_Angeles' or 'UTC'",
                    found: zone.token.foundDescription
                )
            }
        } else {
            timeZone = TimeZone(secondsFromGMT: 0)
        }
        var calendar = Calendar(identifier: .gregorian)
        if let timeZone { calendar.timeZone = timeZone }
        guard let date = calendar.date(from: components) else {
            throw ConditionParseFailure(
                column: text.token.column,
                expected: "a date-time that exists in its time zone",
                found: text.token.foundDescription
            )
        }
        return DateLiteral(text: text.value, timeZone: zone?.value, date: date)
    }

    /// The components of a strict `YYYY-MM-DDTHH:MM:SS`, nil when malformed or out of range.
    static func dateComponents(_ text: String) -> DateComponents? {
        let bytes = Array(text.utf8)
        guard bytes.count == 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1, (1...12).contains(month), (1...ISO8601Timestamp.daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        return DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }
}
