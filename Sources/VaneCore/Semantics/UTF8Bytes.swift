import Foundation

/// Helpers over UTF-8 bytes. Byte-wise search and equality on UTF-8 give JavaScript's code-unit
/// semantics (not Swift's canonical equivalence), and avoid per-call allocation.
enum UTF8Bytes {
    /// Runs `body` on the string's UTF-8 bytes, copying only a non-native (bridged) string.
    @inline(__always)
    static func with<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    /// Runs `body` on the UTF-8 bytes of the value as JavaScript `String(v)` reads it, converting
    /// only values that are not already strings.
    @inline(__always)
    static func withJavaScriptString<R>(_ value: AttributeValue, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch value {
        case .string(let text): return with(text, body)
        default: return with(value.javaScriptString, body)
        }
    }

    /// The bytes left once JavaScript white space is trimmed from both ends (`String.prototype.trim`).
    static func trimmedRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var start = 0
        var end = bytes.count
        while start < end {
            let width = whitespaceWidth(bytes, startingAt: start)
            if width == 0 { break }
            start += width
        }
        while end > start {
            let width = whitespaceWidth(bytes, endingAt: end, notBefore: start)
            if width == 0 { break }
            end -= width
        }
        return start..<end
    }

    /// The UTF-8 length of the white-space scalar starting at `index`, or 0 if it is not one.
    private static func whitespaceWidth(_ bytes: UnsafeBufferPointer<UInt8>, startingAt index: Int) -> Int {
        let lead = bytes[index]
        if lead < 0x80 { return isASCIIWhitespace(lead) ? 1 : 0 }
        // Every non-ASCII JavaScript space is in the BMP: two or three bytes.
        let width = lead >= 0xE0 ? 3 : 2
        guard lead >= 0xC2, lead < 0xF0, bytes.count - index >= width,
            let scalar = decodeScalar(bytes, at: index, width: width)
        else { return 0 }
        return JavaScript.isWhitespace(scalar) ? width : 0
    }

    /// The UTF-8 length of the white-space scalar ending at `end`, or 0 if it is not one.
    private static func whitespaceWidth(
        _ bytes: UnsafeBufferPointer<UInt8>,
        endingAt end: Int,
        notBefore floor: Int
    )
        -> Int
    {
        let last = bytes[end - 1]
        if last < 0x80 { return isASCIIWhitespace(last) ? 1 : 0 }
        var start = end - 1
        while start > floor, end - start < 3, bytes[start] & 0xC0 == 0x80 { start -= 1 }
        return whitespaceWidth(bytes, startingAt: start) == end - start ? end - start : 0
    }

    private static func decodeScalar(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, width: Int) -> Unicode.Scalar?
    {
        var value = UInt32(bytes[index]) & (width == 2 ? 0x1F : 0x0F)
        for offset in 1..<width {
            let continuation = bytes[index + offset]
            guard continuation & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(continuation & 0x3F)
        }
        return Unicode.Scalar(value)
    }

    /// Tab, LF, VT, FF, CR and space.
    @inline(__always)
    static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte &- 0x09 < 5
    }

    /// `-` or `_`, which separate the subtags of a language tag.
    static func isSubtagSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// Whether `needle` occurs in `haystack`; UTF-8 is self-synchronizing, so a byte match is a
    /// match of whole characters.
    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= haystack.count else { return false }
        let lastStart = haystack.count - needle.count
        var start = 0
        while start <= lastStart {
            if haystack[start] == first {
                var offset = 1
                while offset < needle.count, haystack[start + offset] == needle[offset] { offset += 1 }
                if offset == needle.count { return true }
            }
            start += 1
        }
        return false
    }

    /// Whether two byte sequences are equal.
    @inline(__always)
    static func equal(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lhs[index] != rhs[index] { return false }
        return true
    }
}

/// How bytes are normalized before strings are compared.
enum ByteFolding: Sendable {
    /// Byte for byte: JavaScript's code-unit equality, not Swift's canonical equivalence.
    case none
    /// ASCII letters ignore case.
    case asciiCase
    /// ASCII letters ignore case and `_` reads as `-`.
    case languageTag

    @inline(__always)
    func fold(_ byte: UInt8) -> UInt8 {
        switch self {
        case .none: return byte
        case .asciiCase: return byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
        case .languageTag:
            if byte == UInt8(ascii: "_") { return UInt8(ascii: "-") }
            return byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
        }
    }
}

/// A set of strings looked up by folded UTF-8 bytes without allocating.
///
/// Members are stored folded, back to back in one buffer, with entries sorted by an FNV-1a hash of
/// their bytes; a lookup hashes the folded probe, binary-searches the hash and verifies the bytes.
struct FoldedStringSet: Sendable {
    private struct Entry: Sendable {
        var hash: UInt64
        var start: Int
        var count: Int
        /// The member's position among the distinct strings the set was made from.
        var ordinal: Int
    }

    let folding: ByteFolding
    private let storage: [UInt8]
    private let entries: [Entry]

    init(_ strings: [String], folding: ByteFolding) {
        self.folding = folding
        var storage: [UInt8] = []
        var entries: [Entry] = []
        var seen = Set<[UInt8]>()
        for string in strings {
            let folded = string.utf8.map(folding.fold)
            guard seen.insert(folded).inserted else { continue }
            let hash = folded.withUnsafeBufferPointer { Self.hash($0, folding: .none) }
            entries.append(Entry(hash: hash, start: storage.count, count: folded.count, ordinal: entries.count))
            storage += folded
        }
        self.storage = storage
        self.entries = entries.sorted { $0.hash < $1.hash }
    }

    /// Whether some member equals `bytes` after folding.
    func contains(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        ordinal(of: bytes) != nil
    }

    /// The position, among the distinct strings the set was made from, of the member that equals
    /// `bytes` after folding.
    func ordinal(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let hash = Self.hash(bytes, folding: folding)
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].hash < hash { low = middle + 1 } else { high = middle }
        }
        return storage.withUnsafeBufferPointer { stored in
            var index = low
            while index < entries.count, entries[index].hash == hash {
                if matches(entries[index], in: stored, bytes) { return entries[index].ordinal }
                index += 1
            }
            return nil
        }
    }

    private func matches(
        _ entry: Entry,
        in stored: UnsafeBufferPointer<UInt8>,
        _ bytes: UnsafeBufferPointer<UInt8>
    )
        -> Bool
    {
        guard entry.count == bytes.count else { return false }
        for offset in 0..<entry.count where stored[entry.start + offset] != folding.fold(bytes[offset]) {
            return false
        }
        return true
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, folding: ByteFolding) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(folding.fold(byte))) &* 0x100_0000_01b3
        }
        return hash
    }
}
