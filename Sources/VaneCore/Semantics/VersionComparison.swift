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

    /// A version split on `.` and converted once, for comparing against many: a rule's target is
    /// read when the template compiles, and an evaluation reads each attribute at most once, at
    /// the first version rule that tests it (``ConditionEvaluation`` keeps it per attribute). No
    /// allocation: at most five segments.
    struct Version: Sendable {
        /// How many segments the version has (1–5); nil past five.
        private let count: Int?
        /// The segments' numbers (NaN where a segment is not a number), 0 past `count`.
        private let numbers: SIMD8<Double>

        /// Splits and converts `text`.
        init(_ text: String) {
            var text = text
            self = text.withUTF8 { Version(utf8: $0) }
        }

        /// Splits `utf8` on `.` and converts each segment with JavaScript's `Number()`.
        init(utf8: UnsafeBufferPointer<UInt8>) {
            var numbers = SIMD8<Double>.zero
            var count = 0
            var segmentStart = 0
            while true {
                guard count < VersionComparison.maximumSegmentCount else {
                    self.count = nil
                    self.numbers = .zero
                    return
                }
                var segmentEnd = segmentStart
                while segmentEnd < utf8.count, utf8[segmentEnd] != UInt8(ascii: ".") { segmentEnd += 1 }
                numbers[count] = JavaScript.number(utf8: UnsafeBufferPointer(rebasing: utf8[segmentStart..<segmentEnd]))
                count += 1
                guard segmentEnd < utf8.count else { break }
                segmentStart = segmentEnd + 1
            }
            self.count = count
            self.numbers = numbers
        }

        /// The numeric segments (NaN where a segment is not a number), or nil past five segments.
        var segments: [Double]? {
            count.map { count in (0..<count).map { numbers[$0] } }
        }

        /// The ordering against `other`: -1, 0 or 1, or nil when they do not compare. Stops at the
        /// first differing segment, so a segment past it that is not a number does not matter.
        func compare(to other: Version) -> Int? {
            guard count != nil, other.count != nil else { return nil }
            for position in 0..<VersionComparison.maximumSegmentCount {
                let left = numbers[position]
                let right = other.numbers[position]
                if left.isNaN || right.isNaN { return nil }
                if left < right { return -1 }
                if left > right { return 1 }
            }
            return 0
        }
    }
}
