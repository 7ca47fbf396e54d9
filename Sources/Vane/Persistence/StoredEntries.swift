import VaneCore

/// A config's values as a `"VNC3"` cache file holds them (``ConfigCacheFile``): its keys' index
/// over the file's bytes, and each value read from the bytes only when something asks for it (a
/// read of its key, the cache's next write).
///
/// The reader has checked every length, offset and reading, so nothing here can fail.
struct StoredEntries: Sendable {
    /// The keys, at positions `0..<count`; ``KeyIndex/Stored/bytes`` is the whole file.
    let index: KeyIndex

    /// No values.
    init() { index = KeyIndex() }

    /// Entries whose keys `index` holds, each laid out in its bytes as the cache file's entry:
    /// `u32 n · n key bytes · u32 m · m value bytes · u8 readings · f64 number? · i64 integer?`.
    init(index: KeyIndex) { self.index = index }

    var count: Int { index.count }

    /// The key at `position`.
    func key(at position: Int) -> String { index.key(at: position) }

    /// The value at `position`, with the readings stored after it.
    func value(at position: Int) -> CoercedValue {
        let key = index.stored.span(at: position)
        return index.stored.bytes.withUnsafeBytes { bytes in
            let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: key.upperBound, as: UInt32.self)))
            let start = key.upperBound + 4
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]), as: UTF8.self)
            let flags = bytes[start + count]
            var next = start + count + 1
            var number: Double?
            if flags & ReadingFlags.number != 0 {
                number = Double(
                    bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: next, as: UInt64.self))
                )
                next += 8
            }
            var integer: Int?
            if flags & ReadingFlags.integer != 0 {
                integer = Int(
                    truncatingIfNeeded: Int64(
                        bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: next, as: UInt64.self))
                    )
                )
            }
            return CoercedValue(
                stringValue: text,
                boolValue: flags & ReadingFlags.bool != 0 ? flags & ReadingFlags.isTrue != 0 : nil,
                doubleValue: number,
                intValue: integer
            )
        }
    }
}
