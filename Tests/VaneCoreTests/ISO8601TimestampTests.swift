import Foundation
import Testing
import VaneCore

@Suite struct ISO8601TimestampTests {
    /// What the server wrote with `ISO8601DateFormatter` before it used ``ISO8601Timestamp``.
    static func formatterText(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    @Test(
        arguments: [
            0, 1, 999, 1000, 86_399_999, 951_782_400_000, 1_700_000_000_250, 1_764_000_000_001, 4_102_444_799_999,
            253_402_300_799_999,
        ] as [Int64]
    )
    func millisecondsAsFoundationWritesThem(milliseconds: Int64) {
        #expect(ISO8601Timestamp.string(milliseconds: milliseconds) == Self.formatterText(milliseconds: milliseconds))
    }

    @Test func millisecondsMatchDates() {
        for milliseconds in [0, 1_700_000_000_250, 4_102_444_800_000] as [Int64] {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(ISO8601Timestamp.string(milliseconds: milliseconds) == ISO8601Timestamp.string(from: date))
        }
        #expect(ISO8601Timestamp.string(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(ISO8601Timestamp.string(milliseconds: .max) == "Invalid Date")
        #expect(ISO8601Timestamp.string(milliseconds: .min) == "Invalid Date")
    }

    @Test(
        arguments: [
            ("2026-01-31T12:00:00Z", 1_769_860_800_000),
            ("2026-01-31T12:00:00.123Z", 1_769_860_800_123),
            ("2026-01-31T12:00:00.1239Z", 1_769_860_800_123),
            ("2026-01-31T12:00:00.5+01:00", 1_769_857_200_500),
            ("2026-01-31t12:00:00z", 1_769_860_800_000),
        ] as [(String, Int64)]
    )
    func strictReadsRFC3339(text: String, expected: Int64) {
        #expect(ISO8601Timestamp.milliseconds(from: text[...], strict: true) == expected)
        #expect(ISO8601Timestamp.milliseconds(from: text[...]) == expected)
    }

    @Test(arguments: [
        "2026-01-31", "2026-01-31T12:00Z", "2026-01-31T12:00:00", "2026-01-31 12:00:00Z", "2026-01-31T12:00:00,5Z",
        "2026-01-31T12:00:00+01", "2026-01-31T12:00:00+0100", "2026-02-30T12:00:00Z", "yesterday",
    ])
    func strictRefusesWhatRFC3339Lacks(text: String) {
        #expect(ISO8601Timestamp.milliseconds(from: text[...], strict: true) == nil)
    }

    @Test func lenientReadsWhatDatesRead() throws {
        for text in ["2026-01-31", "2026-01-31 12:00", "2026-01-31T12:00:00,5+0100", "2026-01-31T12:00:00+01"] {
            let date = try #require(ISO8601Timestamp.date(from: text[...]))
            let milliseconds = try #require(ISO8601Timestamp.milliseconds(from: text[...]))
            #expect(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) == milliseconds)
        }
    }
}
