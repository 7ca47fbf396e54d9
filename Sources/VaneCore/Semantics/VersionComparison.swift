import Foundation

/// Dotted-version ordering as Firebase's Node Admin SDK computes it for semantic-version rules.
///
/// Each side is split on `.` and every segment goes through JavaScript `Number()`, so `" 1.2 "`,
/// `1..2` (a 0 in the middle) and `1.-1` are all versions. At most five segments: more on either
/// side gives no ordering, which makes the rule false whatever its operator (even `!=`). Missing
/// segments are 0. The comparison stops at the first differing segment, and a segment that is not
/// a number gives no ordering only if the comparison reaches it (`1.x` < `2.0`).
enum VersionComparison {
    /// Segments beyond this count make a version incomparable.
    static let maximumSegmentCount = 5

    /// A version split and converted once, for comparing against many values.
    struct Version: Sendable, Hashable {
        /// The numeric segments (NaN where a segment is not a number), or nil past five segments.
        let segments: [Double]?

        /// Splits and converts `text`.
        init(_ text: String) {
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
    static func compare(_ lhs: String, _ rhs: String) -> Int? {
        compare(lhs, Version(rhs))
    }

    /// The ordering of `lhs` against a pre-split version: -1, 0 or 1, or nil when they do not compare.
    ///
    /// Walks `lhs` in place, converting only the segments the comparison reaches.
    static func compare(_ lhs: String, _ rhs: Version) -> Int? {
        compare(lhs[...], rhs)
    }

    /// ``compare(_:_:)-(String,Version)`` on a slice.
    static func compare(_ lhs: Substring, _ rhs: Version) -> Int? {
        if let ordering = lhs.utf8.withContiguousStorageIfAvailable({ compare(utf8: $0, rhs) }) { return ordering }
        var copy = String(lhs)
        return copy.withUTF8 { compare(utf8: $0, rhs) }
    }

    /// ``compare(_:_:)-(String,Version)`` on UTF-8 bytes; walks them in place, converting only the
    /// segments the comparison reaches.
    static func compare(utf8 lhs: UnsafeBufferPointer<UInt8>, _ rhs: Version) -> Int? {
        guard let right = rhs.segments else { return nil }
        // Count the separators first: a sixth segment voids the comparison even after a difference.
        var dots = 0
        for byte in lhs where byte == UInt8(ascii: ".") {
            dots += 1
            if dots >= maximumSegmentCount { return nil }
        }
        var segmentStart = 0
        for position in 0..<maximumSegmentCount {
            let left: Double
            if position <= dots {
                var segmentEnd = segmentStart
                while segmentEnd < lhs.count, lhs[segmentEnd] != UInt8(ascii: ".") { segmentEnd += 1 }
                left = JavaScript.number(utf8: UnsafeBufferPointer(rebasing: lhs[segmentStart..<segmentEnd]))
                segmentStart = segmentEnd + 1
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
