import Foundation

/// Time as the store keeps it: milliseconds since 1970, rendered as RFC 3339 in the API.
enum Clock {
    static func nowMilliseconds() -> Int64 {
        milliseconds(Date())
    }

    /// Milliseconds since 1970, rounded down.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `2026-11-22T03:04:05.678Z`.
    static func rfc3339(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date(milliseconds: milliseconds))
    }

    /// Milliseconds of an RFC 3339 time, with or without fractional seconds.
    static func milliseconds(rfc3339 text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
        return nil
    }
}
