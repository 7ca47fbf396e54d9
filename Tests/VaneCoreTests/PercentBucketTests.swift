import Foundation
import Testing

@testable import VaneCore

@Suite struct PercentBucketTests {
    /// §7.2: Node's "known percent condition values", BETWEEN (0, 50,000,000].
    static let vectors: [(seed: String, id: String, expected: Bool, bucket: UInt64)] = [
        ("1", "one", false, 64_146_488),
        ("2", "two", false, 76_516_209),
        ("3", "three", true, 6_701_947),
        ("4", "four", false, 85_000_289),
        ("5", "five", true, 2_514_745),
        ("", "\u{1F60A}", true, 9_911_325),
        ("", "\u{1F600}", false, 62_040_281),
        ("h\u{EA}l\u{A3}o", "w\u{F8}rl\u{D0}", false, 67_411_682),
        ("\u{159}em\u{F8}\u{165}e", "\u{E7}\u{14D}nf\u{12F}\u{121}", true, 19_728_496),
        ("long", String(repeating: ".", count: 100), true, 39_278_120),
        ("very-long", String(repeating: ".", count: 1000), false, 71_699_042),
    ]

    @Test(arguments: vectors)
    func matchesPublishedVectors(seed: String, id: String, expected: Bool, bucket: UInt64) {
        let p = PercentBucket.microPercentile(seed: seed, randomizationId: id)
        #expect(p == bucket)
        #expect(PercentRange.between(lower: 0, upper: 50_000_000).contains(microPercentile: p) == expected)
    }

    /// §7.2 boundary rows with the bucket injected; missing bounds read as 0.
    static let boundaries: [(p: UInt64, range: PercentRange, expected: Bool)] = [
        (1, .lessOrEqual(0), false),
        (1, .between(lower: 0, upper: 0), false),
        (1, .between(lower: 0, upper: 1), true),
        (9, .lessOrEqual(10), true),
        (10, .lessOrEqual(10), true),
        (11, .lessOrEqual(10), false),
        (11, .greaterThan(10), true),
        (9, .greaterThan(10), false),
        (10, .between(lower: 9, upper: 11), true),
        (12, .between(lower: 9, upper: 11), false),
        (9, .between(lower: 9, upper: 11), false),
        (11, .between(lower: 9, upper: 11), true),
        (0, .lessOrEqual(0), true),
        (0, .between(lower: 0, upper: 100_000_000), false),
        (5, .between(lower: 5, upper: 5), false),
        (5, .unknown("UNKNOWN"), false),
    ]

    @Test(arguments: boundaries)
    func appliesBoundaries(p: UInt64, range: PercentRange, expected: Bool) {
        #expect(range.contains(microPercentile: p) == expected)
    }

    @Test func matchesRealHashBoundaryRows() {
        let p = PercentBucket.microPercentile(seed: "abcdef", randomizationId: "123")
        #expect(p == 9_571_542)
        #expect(PercentRange.lessOrEqual(100_000_000).contains(microPercentile: p))
        #expect(!PercentRange.lessOrEqual(0).contains(microPercentile: p))
        #expect(PercentRange.greaterThan(0).contains(microPercentile: p))
        #expect(!PercentRange.greaterThan(100_000_000).contains(microPercentile: p))
        #expect(PercentRange.between(lower: 0, upper: 100_000_000).contains(microPercentile: p))
        #expect(!PercentRange.between(lower: 50_000_000, upper: 50_000_000).contains(microPercentile: p))
        #expect(!PercentRange.unknown("UNKNOWN").contains(microPercentile: p))
    }

    @Test func emptySeedAddsNoSeparator() {
        #expect(
            PercentBucket.microPercentile(seed: "", randomizationId: "abc")
                != PercentBucket.microPercentile(seed: "", randomizationId: ".abc")
        )
        #expect(
            PercentBucket.microPercentile(seed: "a", randomizationId: "b")
                == PercentBucket.microPercentile(seed: "", randomizationId: "a.b")
        )
    }

    @Test func distributesEvenly() {
        var generator = SplitMix64(seed: 7)
        let count = 100_000
        let ranges: [(PercentRange, Double)] = [
            (.lessOrEqual(10_000_000), 0.1),
            (.greaterThan(10_000_000), 0.9),
            (.between(lower: 40_000_000, upper: 60_000_000), 0.2),
            (.between(lower: 25_000_000, upper: 75_000_000), 0.5),
        ]
        var hits = [Int](repeating: 0, count: ranges.count)
        for _ in 0..<count {
            let id = UUID(uuid: Self.randomUUIDBytes(&generator)).uuidString
            let p = PercentBucket.microPercentile(seed: "seed", randomizationId: id)
            for (index, range) in ranges.enumerated() where range.0.contains(microPercentile: p) { hits[index] += 1 }
        }
        for (index, (_, share)) in ranges.enumerated() {
            let mean = Double(count) * share
            let sigma = (Double(count) * share * (1 - share)).squareRoot()
            #expect(abs(Double(hits[index]) - mean) <= 3 * sigma, "range \(index): \(hits[index]) hits")
        }
    }

    private static func randomUUIDBytes(_ generator: inout SplitMix64) -> uuid_t {
        let high = generator.next()
        let low = generator.next()
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (8 * index)) }
        return (
            byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5), byte(high, 6),
            byte(high, 7), byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5),
            byte(low, 6), byte(low, 7)
        )
    }
}
