package import Foundation
import VaneCore

/// Time as the store keeps it: milliseconds since 1970, rendered as RFC 3339 in the API.
package enum Clock {
    package static func nowMilliseconds() -> Int64 {
        milliseconds(Date())
    }

    /// Milliseconds since 1970, rounded down.
    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    package static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `2026-11-22T03:04:05.678Z`.
    package static func rfc3339(milliseconds: Int64) -> String {
        ISO8601Timestamp.string(milliseconds: milliseconds)
    }

    /// Milliseconds of an RFC 3339 time, with or without fractional seconds.
    package static func milliseconds(rfc3339 text: String) -> Int64? {
        ISO8601Timestamp.milliseconds(from: text[...], strict: true)
    }
}

/// Where the server's request handling reads the time: the system clock, or a test's clock that
/// can jump ahead (a launch time, the next batch's receipt time) instead of the test sleeping.
package struct ServerClock: Sendable {
    /// The current time.
    package let now: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system clock.
    package static let system = ServerClock { Date() }

    /// The current time in milliseconds since 1970, as the store keeps it.
    package func nowMilliseconds() -> Int64 {
        Clock.milliseconds(now())
    }
}
