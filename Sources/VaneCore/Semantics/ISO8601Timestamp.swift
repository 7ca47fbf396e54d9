public import Foundation

/// ISO 8601 timestamps in UTC, without `DateFormatter`: proleptic Gregorian arithmetic only, so it
/// is fast, allocation-light and identical on every platform.
///
/// The one ISO 8601 implementation Vane has: condition dates, context values, the server's
/// RFC 3339 times and the SDK's messages all use it.
///
/// ```swift
/// ISO8601Timestamp.string(milliseconds: 1_700_000_000_250)   // "2023-11-14T22:13:20.250Z"
/// ISO8601Timestamp.milliseconds(from: "2023-11-14T22:13:20Z", strict: true)   // 1_700_000_000_000
/// ```
public enum ISO8601Timestamp {
    private static let millisecondsPerDay: Int64 = 86_400_000
    /// JavaScript's time range: ±100,000,000 days around 1970.
    private static let maximumMilliseconds: Int64 = 8_640_000_000_000_000

    /// JavaScript `Date.prototype.toISOString()`: `2024-05-01T12:30:00.250Z`.
    ///
    /// JavaScript time values are whole milliseconds, so the instant is floored to one. Years outside
    /// 0…9999 take a sign and six digits; outside JavaScript's range the text is `Invalid Date`.
    public static func string(from date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite, abs(milliseconds) <= Double(maximumMilliseconds) else { return "Invalid Date" }
        return string(milliseconds: Int64(milliseconds))
    }

    /// A time in milliseconds since 1970 as `2024-05-01T12:30:00.250Z`: always three fraction
    /// digits and `Z`, as ``string(from:)`` writes it.
    public static func string(milliseconds total: Int64) -> String {
        guard total >= -maximumMilliseconds, total <= maximumMilliseconds else { return "Invalid Date" }
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
    public static func date(from text: Substring) -> Date? {
        var copy = text
        guard let parts = copy.withUTF8({ parse($0, strict: false) }) else { return nil }
        return Date(timeIntervalSince1970: parts.seconds)
    }

    /// The milliseconds since 1970 (rounded down) of a timestamp.
    ///
    /// - Parameters:
    ///   - text: The timestamp.
    ///   - strict: Accept RFC 3339 date-times only (`2026-01-31T12:00:00Z`,
    ///     `2026-01-31T12:00:00.5+01:00`): a `T`, seconds and a zone are required. Without it, the
    ///     forms ``date(from:)`` reads.
    public static func milliseconds(from text: Substring, strict: Bool = false) -> Int64? {
        var copy = text
        return copy.withUTF8 { parse($0, strict: strict) }?.milliseconds
    }

    /// A parsed timestamp, kept in parts so each caller rounds once.
    private struct Parts {
        var days: Int
        /// Seconds since midnight, local to the zone.
        var secondOfDay = 0
        /// The fraction of a second, as written.
        var fraction = 0.0
        /// The fraction in whole milliseconds, rounded down.
        var fractionMilliseconds = 0
        /// The zone's offset east of UTC, in seconds.
        var offset = 0

        /// In the order ``date(from:)`` has always added them, so dates stay bit for bit the same.
        var seconds: Double { Double(days) * 86_400 + Double(secondOfDay) + fraction - Double(offset) }

        var milliseconds: Int64 {
            (Int64(days) * 86_400 + Int64(secondOfDay - offset)) * 1000 + Int64(fractionMilliseconds)
        }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, strict: Bool) -> Parts? {
        var cursor = Cursor(bytes: bytes)
        guard let year = cursor.digits(4), cursor.skip("-"), let month = cursor.digits(2), cursor.skip("-"),
            let day = cursor.digits(2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var parts = Parts(days: daysFromCivil(year: year, month: month, day: day))
        if cursor.isAtEnd { return strict ? nil : parts }
        guard cursor.skip("T") || cursor.skip("t") || (!strict && cursor.skip(" ")),
            let hour = cursor.digits(2), cursor.skip(":"), let minute = cursor.digits(2),
            hour < 24, minute < 60
        else { return nil }
        parts.secondOfDay = hour * 3600 + minute * 60
        if cursor.skip(":") {
            guard let second = cursor.digits(2), second < 60 else { return nil }
            parts.secondOfDay += second
            if cursor.skip(".") || (!strict && cursor.skip(",")) {
                guard let fraction = cursor.fraction() else { return nil }
                parts.fraction = fraction.seconds
                parts.fractionMilliseconds = fraction.milliseconds
            }
        } else if strict {
            return nil
        }
        if cursor.skip("Z") || cursor.skip("z") {
            return cursor.isAtEnd ? parts : nil
        }
        if cursor.isAtEnd { return strict ? nil : parts }
        guard let offset = cursor.zoneOffset(strict: strict) else { return nil }
        parts.offset = offset
        return cursor.isAtEnd ? parts : nil
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

        /// One or more digits after the decimal mark, as a fraction of a second and as whole
        /// milliseconds (rounded down).
        mutating func fraction() -> (seconds: Double, milliseconds: Int)? {
            var value = 0.0
            var scale = 1.0
            var milliseconds = 0
            let start = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                let digit = bytes[index] - UInt8(ascii: "0")
                scale /= 10
                value += Double(digit) * scale
                if index - start < 3 { milliseconds = milliseconds * 10 + Int(digit) }
                index += 1
            }
            for _ in min(index - start, 3)..<3 { milliseconds *= 10 }
            return index > start ? (value, milliseconds) : nil
        }

        /// `±HH`, `±HHMM` or `±HH:MM` (only `±HH:MM` when `strict`), in seconds east of UTC.
        mutating func zoneOffset(strict: Bool) -> Int? {
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
            if !isAtEnd || strict {
                guard skip(":") || !strict, let parsed = digits(2), parsed < 60 else { return nil }
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
