import Testing

@testable import VaneCore

@Suite struct VersionComparisonTests {
    static let orderings: [(String, String, Int?)] = [
        ("1.2.3", "1.2.3", 0), ("1.2", "1.2.0.0.0", 0), ("", "0", 0), ("", "0.0", 0), ("1..2", "1.0.2", 0),
        ("1.2.3", "1.2.4", -1), ("1.10", "1.9", 1), ("2", "10", -1), ("1.-1", "1.0", -1), ("1.x", "2.0", -1),
        ("2.0", "1.x", 1), ("1.x", "1.0", nil), ("1.0", "1.x", nil), ("x", "1", nil), ("1.2.3.4.5", "1.2.3.4.5", 0),
        ("1.2.3.4.5.6", "1", nil), ("1", "1.2.3.4.5.6", nil), ("1.0.0.0.0.0", "2", nil), (" 1.2 ", "1.2", 0),
        ("0x10", "16", 0), ("1e1", "10", 0), ("1.5e0", "1.5", 0), ("Infinity", "1e400", 0),
        ("1.2.3.4.6", "1.2.3.4.5", 1), ("1.2.3.4.x", "1.2.3.4.5", nil), ("1.2.3.4.5", "1.2.3.4.x", nil),
    ]

    @Test(arguments: orderings)
    func ordersLikeNode(lhs: String, rhs: String, expected: Int?) {
        #expect(VersionComparison.Version(lhs).compare(to: VersionComparison.Version(rhs)) == expected)
    }

    @Test func splitsTargetOnce() {
        #expect(VersionComparison.Version("5.12.3").segments == [5, 12, 3])
        #expect(VersionComparison.Version("1.2.3.4.5.6").segments == nil)
        #expect(VersionComparison.Version("").segments == [0])
        #expect(VersionComparison.Version("1.x").segments?[1].isNaN == true)
    }
}
