/// A fast 64-bit hash of bytes, eight at a time: xor a word in, multiply, fold the high bits
/// down; then MurmurHash3's finaliser, so every input bit reaches the low bits a table indexes
/// by (without it, keys differing only in their 7th or 8th byte shared buckets). Not
/// cryptographic: the SDK's ``KeyTable`` hashes keys with it (they come from the app and its own
/// server), and the cache file's checksum detects damage with it (every step is a bijection of
/// the running hash, so changing any one word always changes the result).
enum ByteHash {
    /// The hash of `bytes`, and the OR of all their bytes' words (its high bits say whether any
    /// byte is not ASCII).
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> (hash: UInt64, orOfWords: UInt64) {
        var hash = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var orOfWords: UInt64 = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            orOfWords |= word
            hash = mix(hash ^ word)
            offset += 8
        }
        if offset < bytes.count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                word |= UInt64(bytes[offset]) << shift
                shift += 8
                offset += 1
            }
            orOfWords |= word
            hash = mix(hash ^ word)
        }
        return (finalize(hash), orOfWords)
    }

    /// Whether a word from ``hash(_:)``'s `orOfWords` had only ASCII bytes.
    static func isASCII(_ orOfWords: UInt64) -> Bool { orOfWords & 0x8080_8080_8080_8080 == 0 }

    @inline(__always)
    private static func finalize(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash = hash &* 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash = hash &* 0xC4CE_B9FE_1A85_EC53
        return hash ^ (hash >> 33)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let product = value &* 0xBF58_476D_1CE4_E5B9
        return product ^ (product >> 29)
    }
}
