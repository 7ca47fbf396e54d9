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

    /// ``compare(_:_:)-(String,Version)`` on UTF-8 bytes.
    static func compare(utf8 lhs: UnsafeBufferPointer<UInt8>, _ rhs: Version) -> Int? {
        Segments(utf8: lhs).compare(to: rhs)
    }

    /// A value's version split and converted once, for comparing against many targets: an
    /// evaluation keeps one per attribute, so a template's version rules on `app.version` read
    /// the context's version once, not once per rule. No allocation: at most five segments.
    struct Segments {
        /// How many segments the value has (1–5); nil past five.
        private let count: Int?
        /// The segments' numbers (NaN where a segment is not a number), 0 past `count`.
        private let numbers: SIMD8<Double>

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

        /// The ordering against `rhs`: -1, 0 or 1, or nil when they do not compare. Stops at the
        /// first differing segment, so a segment past it that is not a number does not matter.
        func compare(to rhs: Version) -> Int? {
            guard count != nil, let right = rhs.segments else { return nil }
            for position in 0..<VersionComparison.maximumSegmentCount {
                let left = numbers[position]
                let other = position < right.count ? right[position] : 0
                if left.isNaN || other.isNaN { return nil }
                if left < other { return -1 }
                if left > other { return 1 }
            }
            return 0
        }
    }
}
