import Foundation

/// ISO 8601 timestamps in UTC, without `DateFormatter`: proleptic Gregorian arithmetic only, so it
/// is fast, allocation-light and identical on every platform.
enum ISO8601Timestamp {
    private static let millisecondsPerDay: Int64 = 86_400_000
    /// JavaScript's time range: ±100,000,000 days around 1970.
    private static let maximumMilliseconds: Double = 8.64e15

    /// JavaScript `Date.prototype.toISOString()`: `2024-05-01T12:30:00.250Z`.
    ///
    /// JavaScript time values are whole milliseconds, so the instant is floored to one. Years outside
    /// 0…9999 take a sign and six digits; outside JavaScript's range the text is `Invalid Date`.
    static func string(from date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite, abs(milliseconds) <= maximumMilliseconds else { return "Invalid Date" }
        let total = Int64(milliseconds)
        let days = floorDivide(total, millisecondsPerDay)
        let timeOfDay = total - days * millisecondsPerDay
        let (year, month, day) = civil(fromDays: days)
        var out = ""
        out.reserveCapacity(27)
        if (0...9999).contains(year) {
            append(year, width: 4, to: &out)
        } else {
            out.append(year < 0 ? "-" : "+")
            append(abs(year), width: 6, to: &out)
        }
        out.append("-")
        append(month, width: 2, to: &out)
        out.append("-")
        append(day, width: 2, to: &out)
        out.append("T")
        append(timeOfDay / 3_600_000, width: 2, to: &out)
        out.append(":")
        append(timeOfDay / 60_000 % 60, width: 2, to: &out)
        out.append(":")
        append(timeOfDay / 1000 % 60, width: 2, to: &out)
        out.append(".")
        append(timeOfDay % 1000, width: 3, to: &out)
        out.append("Z")
        return out
    }

    /// Parses `YYYY-MM-DD`, optionally followed by `T` (or a space) and `HH:MM[:SS[.fraction]]`, and
    /// then optionally `Z` or an offset `±HH[:MM]`. No zone means UTC. Nil when malformed.
    static func date(from text: Substring) -> Date? {
        var copy = text
        return copy.withUTF8 { parse($0) }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var cursor = Cursor(bytes: bytes)
        guard let year = cursor.digits(4), cursor.skip("-"), let month = cursor.digits(2), cursor.skip("-"),
            let day = cursor.digits(2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var seconds = Double(daysFromCivil(year: year, month: month, day: day)) * 86_400
        if cursor.isAtEnd { return Date(timeIntervalSince1970: seconds) }
        guard cursor.skip("T") || cursor.skip("t") || cursor.skip(" "),
            let hour = cursor.digits(2), cursor.skip(":"), let minute = cursor.digits(2),
            hour < 24, minute < 60
        else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        if cursor.skip(":") {
            guard let second = cursor.digits(2), second < 60 else { return nil }
            seconds += Double(second)
            if cursor.skip(".") || cursor.skip(",") {
                guard let fraction = cursor.fraction() else { return nil }
                seconds += fraction
            }
        }
        if cursor.skip("Z") || cursor.skip("z") {
            return cursor.isAtEnd ? Date(timeIntervalSince1970: seconds) : nil
        }
        if !cursor.isAtEnd {
            guard let offset = cursor.zoneOffset() else { return nil }
            seconds -= Double(offset)
        }
        return cursor.isAtEnd ? Date(timeIntervalSince1970: seconds) : nil
    }

    /// A forward reader over ASCII bytes.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        /// Exactly `count` decimal digits as an integer.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for offset in 0..<count {
                let digit = bytes[index + offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            index += count
            return value
        }

        /// One or more digits after the decimal mark, as a fraction of a second.
        mutating func fraction() -> Double? {
            var value = 0.0
            var scale = 1.0
            let start = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                scale /= 10
                value += Double(bytes[index] - UInt8(ascii: "0")) * scale
                index += 1
            }
            return index > start ? value : nil
        }

        /// `±HH`, `±HHMM` or `±HH:MM`, in seconds east of UTC.
        mutating func zoneOffset() -> Int? {
            let negative: Bool
            if skip("+") {
                negative = false
            } else if skip("-") {
                negative = true
            } else {
                return nil
            }
            guard let hours = digits(2), hours < 24 else { return nil }
            var minutes = 0
            if !isAtEnd {
                _ = skip(":")
                guard let parsed = digits(2), parsed < 60 else { return nil }
                minutes = parsed
            }
            let offset = hours * 3600 + minutes * 60
            return negative ? -offset : offset
        }
    }

    private static func floorDivide(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let quotient = lhs / rhs
        return lhs % rhs < 0 ? quotient - 1 : quotient
    }

    private static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The number of days in a month of the proleptic Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = Int(days) + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func append(_ value: some BinaryInteger, width: Int, to out: inout String) {
        let digits = String(value)
        if digits.count < width { out.append(String(repeating: "0", count: width - digits.count)) }
        out.append(digits)
    }
}
