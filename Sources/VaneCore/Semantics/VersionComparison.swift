import Foundation

/// Dotted-version ordering as Firebase's Node Admin SDK computes it for semantic-version rules.
///
/// Each side is split on `.` and every segment goes through JavaScript `Number()`, so `" 1.2 "`,
/// `1..2` (a 0 in the middle) and `1.-1` are all versions. At most five segments: more on either
/// side gives no ordering, which makes the rule false whatever its operator (even `!=`). Missing
/// segments are 0. The comparison stops at the first differing segment, and a segment that is not
/// a number gives no ordering only if the comparison reaches it (`1.x` < `2.0`).
public enum VersionComparison {
    /// Segments beyond this count make a version incomparable.
    public static let maximumSegmentCount = 5

    /// A version split and converted once, for comparing against many values.
    public struct Version: Sendable, Hashable {
        /// The numeric segments (NaN where a segment is not a number), or nil past five segments.
        public let segments: [Double]?

        /// Splits and converts `text`.
        public init(_ text: String) {
            var segments: [Double] = []
            for segment in text[...].split(separator: ".", omittingEmptySubsequences: false) {
                guard segments.count < VersionComparison.maximumSegmentCount else {
                    self.segments = nil
                    return
                }
                segments.append(JavaScript.number(from: segment))
            }
            self.segments = segments
        }
    }

    /// The ordering of `lhs` against `rhs`: -1, 0 or 1, or nil when they do not compare.
    public static func compare(_ lhs: String, _ rhs: String) -> Int? {
        compare(lhs, Version(rhs))
    }

    /// The ordering of `lhs` against a pre-split version: -1, 0 or 1, or nil when they do not compare.
    ///
    /// Walks `lhs` in place, converting only the segments the comparison reaches.
    public static func compare(_ lhs: String, _ rhs: Version) -> Int? {
        compare(lhs[...], rhs)
    }

    /// ``compare(_:_:)-(String,Version)`` on a slice.
    static func compare(_ lhs: Substring, _ rhs: Version) -> Int? {
        guard let right = rhs.segments else { return nil }
        // Count the separators first: a sixth segment voids the comparison even after a difference.
        var dots = 0
        for byte in lhs.utf8 where byte == UInt8(ascii: ".") {
            dots += 1
            if dots >= maximumSegmentCount { return nil }
        }
        var rest = lhs
        for position in 0..<maximumSegmentCount {
            let left: Double
            if position <= dots {
                let end = rest.utf8.firstIndex(of: UInt8(ascii: ".")) ?? rest.endIndex
                left = JavaScript.number(from: rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[end...]
            } else {
                left = 0
            }
            let other = position < right.count ? right[position] : 0
            if left.isNaN || other.isNaN { return nil }
            if left < other { return -1 }
            if left > other { return 1 }
        }
        return 0
    }
}
