import Foundation

extension AttributeValue {
    /// The value as JavaScript `String(v)` reads it, which is what string rules compare.
    ///
    /// A number goes through ``JavaScript/string(from:)`` (`5.0` is `"5"`), a Boolean is `"true"` or
    /// `"false"`, a date is ISO 8601 in UTC with milliseconds (`2024-05-01T12:30:00.000Z`), and a
    /// list is its elements joined by `","`, as JavaScript joins an array.
    var javaScriptString: String {
        switch self {
        case .string(let text): return text
        case .number(let number): return JavaScript.string(from: number)
        case .bool(let flag): return flag ? "true" : "false"
        case .date(let date): return ISO8601Timestamp.string(from: date)
        case .stringList(let list): return list.joined(separator: ",")
        }
    }

    /// The value as JavaScript `Number(v)` reads it, which is what numeric rules compare; may be NaN.
    ///
    /// A string goes through ``JavaScript/number(from:)`` (`" 5 "` is 5, `""` is 0), a Boolean is
    /// 1 or 0, a date is milliseconds since 1970, and a list is `Number(String(list))`
    /// (`[]` is 0, `["5"]` is 5, `["5", "6"]` is NaN).
    var javaScriptNumber: Double {
        switch self {
        case .string(let text): return JavaScript.number(from: text)
        case .number(let number): return number
        case .bool(let flag): return flag ? 1 : 0
        case .date(let date): return date.timeIntervalSince1970 * 1000
        case .stringList(let list): return JavaScript.number(from: list.joined(separator: ","))
        }
    }

    /// The value as an instant, for date rules; nil when it has none.
    ///
    /// A string is parsed as ISO 8601 (`2024-05-01`, `2024-05-01T12:30:00`, with optional fraction
    /// and `Z` or `±HH:MM`; no zone means UTC); a number is seconds since 1970. Booleans and lists
    /// are not dates.
    var dateValue: Date? {
        switch self {
        case .date(let date): return date
        case .string(let text): return ISO8601Timestamp.date(from: text[...])
        case .number(let seconds): return seconds.isFinite ? Date(timeIntervalSince1970: seconds) : nil
        case .bool, .stringList: return nil
        }
    }

    /// The value as a list of names, for audience rules; nil when it is not one.
    ///
    /// A list is itself and a single string is a one-element list. Numbers, Booleans and dates are
    /// not lists: audience names are text, and guessing a spelling for them would hide mistakes.
    var stringListValue: [String]? {
        switch self {
        case .stringList(let list): return list
        case .string(let text): return [text]
        case .number, .bool, .date: return nil
        }
    }
}
