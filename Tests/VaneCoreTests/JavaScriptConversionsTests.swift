import Foundation
import Testing

@testable import VaneCore

@Suite struct JavaScriptNumberTests {
    static let valid: [(String, Double)] = [
        ("", 0), ("   ", 0), ("0", 0), ("5", 5), ("-5", -5), ("+5", 5), (" 12 ", 12), ("00012", 12),
        ("5.", 5), (".5", 0.5), ("+.5", 0.5), ("-.5e1", -5), ("5.e1", 50), ("0.1", 0.1), ("0.1e1", 1),
        ("1e3", 1000), ("1E3", 1000), ("1e+3", 1000), ("1e-3", 0.001), ("1.5e-3", 0.0015), ("4.35", 4.35),
        ("0x10", 16), ("0X1f", 31), ("0xFFFFFFFF", 4_294_967_295), ("0o17", 15), ("0O17", 15), ("0b101", 5),
        ("0B11", 3), (" 0x10 ", 16), ("0x0", 0),
        ("Infinity", .infinity), ("+Infinity", .infinity), ("-Infinity", -.infinity),
        ("1e400", .infinity), ("-1e400", -.infinity), ("1e-400", 0), ("1e99999999999999999999999", .infinity),
        ("0e99999999999999999999", 0),
        ("1.7976931348623157e308", .greatestFiniteMagnitude), ("5e-324", .leastNonzeroMagnitude),
        ("2.2250738585072014e-308", .leastNormalMagnitude),
        ("123456789012345678901234567890", 1.2345678901234568e29),
        ("3.14159265358979323846264338327950288", .pi),
        ("9007199254740993", 9_007_199_254_740_992),  // halfway: rounds to even
        ("9007199254740995", 9_007_199_254_740_996),
        ("0x20000000000001", 9_007_199_254_740_992),  // 2^53 + 1: halfway, to even
        ("0x20000000000003", 9_007_199_254_740_996),  // 2^53 + 3: halfway, to even
        ("0x2000000000000100000001", 9_007_199_254_740_994 * 4_294_967_296),  // just above halfway
        ("0x10000000000000000", 18_446_744_073_709_551_616),
        ("0b" + String(repeating: "1", count: 70), 1_180_591_620_717_411_303_424),
        ("0.000001", 0.000001),
    ]

    @Test(arguments: valid)
    func convertsValidText(text: String, expected: Double) {
        let value = JavaScript.number(from: text)
        #expect(value == expected, "Number(\(text.debugDescription))")
    }

    @Test func negativeZeroKeepsItsSign() {
        #expect(JavaScript.number(from: "-0").sign == .minus)
        #expect(JavaScript.number(from: "-0.0e5").sign == .minus)
        #expect(JavaScript.number(from: "0").sign == .plus)
    }

    @Test(arguments: [
        "not a number", "NaN", "nan", "inf", "infinity", "Infinityx", "+-5", "--5", "-", "+", ".", ".e1", "e3", "1e",
        "1e+", "1e1.5", "1_000", "1,000", "5px", "1 2", "0x", "0xg", "-0x10", "+0x10", "0x 10", "0b2", "0o8", "0x1.8",
        "\u{85}5", "\u{200B}5", "5\u{200B}", "٥", "１", "5\u{20AC}", "\u{20AC}5", "5\u{1F600}", "\u{1F600}5",
        "\u{E9}", "5\u{301}",
    ])
    func rejectsInvalidText(text: String) {
        #expect(JavaScript.number(from: text).isNaN, "Number(\(text.debugDescription))")
    }

    @Test func trimsEveryJavaScriptWhiteSpace() {
        let spaces: [Unicode.Scalar] = [
            "\t", "\n", "\u{0B}", "\u{0C}", "\r", " ", "\u{A0}", "\u{1680}", "\u{2000}", "\u{2005}", "\u{200A}",
            "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{FEFF}",
        ]
        for space in spaces {
            let pad = String(Character(space))
            #expect(JavaScript.number(from: pad + "5" + pad) == 5, "U+\(String(space.value, radix: 16))")
            #expect(JavaScript.number(from: pad) == 0)
        }
    }

    @Test func trimsLikeJavaScript() {
        #expect(JavaScript.trimmingWhitespace("\u{3000} a b \u{2028}\u{FEFF}") == "a b")
        #expect(JavaScript.trimmingWhitespace("\u{1F600}\u{A0}") == "\u{1F600}")
        #expect(JavaScript.trimmingWhitespace("\u{A0}caf\u{E9}") == "caf\u{E9}")
        #expect(JavaScript.trimmingWhitespace("\u{20AC}\u{205F}") == "\u{20AC}")
        #expect(JavaScript.trimmingWhitespace("\u{85}x\u{200B}") == "\u{85}x\u{200B}")
        #expect(JavaScript.trimmingWhitespace(" \t\n ").isEmpty)
    }

    @Test func roundTripsThroughJavaScriptString() {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            #expect(JavaScript.number(from: JavaScript.string(from: value)) == value, "\(value)")
        }
    }
}

@Suite struct JavaScriptStringTests {
    static let cases: [(Double, String)] = [
        (0, "0"), (-0.0, "0"), (5, "5"), (-5, "-5"), (5.5, "5.5"), (0.5, "0.5"), (100, "100"), (0.1, "0.1"),
        (0.1 + 0.2, "0.30000000000000004"), (4.35, "4.35"), (123.456, "123.456"), (-123.456, "-123.456"),
        (1e21, "1e+21"), (1.5e21, "1.5e+21"), (1e20, "100000000000000000000"),
        (1.2345678901234568e20, "123456789012345680000"), (1e16, "10000000000000000"),
        (9_007_199_254_740_992, "9007199254740992"), (18_014_398_509_481_984, "18014398509481984"),
        (1_000_000_000_000_000.5, "1000000000000000.5"),
        (1e-6, "0.000001"), (1.234e-6, "0.000001234"), (1e-7, "1e-7"), (-1e-7, "-1e-7"), (1.5e-7, "1.5e-7"),
        (1.2345e-10, "1.2345e-10"), (1.5e300, "1.5e+300"), (.leastNonzeroMagnitude, "5e-324"),
        (.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        (.nan, "NaN"), (.infinity, "Infinity"), (-.infinity, "-Infinity"),
    ]

    @Test(arguments: cases)
    func formatsLikeECMAScript(number: Double, expected: String) {
        #expect(JavaScript.string(from: number) == expected)
    }
}

/// A small deterministic generator (SplitMix64), so randomized tests are reproducible.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
