/// String keys by position, found through a hash of the key's UTF-8 bytes: the index of a
/// ``KeyTable``.
///
/// The SDK's reads are a lock and a lookup, measured against a bare `Dictionary` lookup
/// (docs/PERFORMANCE.md). Most of a `Dictionary<String, …>` lookup is hashing the key: SipHash-1-3
/// behind String's Unicode-normalisation checks. This index hashes ASCII keys with ``ByteHash``,
/// eight bytes at a time (keys come from the app and its own server, so there is no one to flood
/// it), which makes its lookup cheaper than `Dictionary`'s by about what the lock costs.
///
/// Equality is still String's (canonical equivalence), as with `Dictionary`: two spellings of one
/// non-ASCII key hash differently here, so keys that are not ASCII are not hashed but compared
/// one by one (apps and servers name keys in ASCII; the scan is for correctness).
///
/// The first keys may be bytes of a cache file (``Stored``), hashed where they are: an SDK start
/// then makes no String per key. An ASCII key is compared with them byte by byte (for ASCII that
/// is String's equality); a String of a stored key is made only when something asks for it
/// (``key(at:)``).
struct KeyIndex: Sendable {
    /// Keys kept as UTF-8 bytes in one buffer: positions `0..<count` of an index.
    struct Stored: Sendable {
        /// The buffer (a whole cache file).
        let bytes: [UInt8]
        /// Each key's first byte in ``bytes`` (the high 32 bits) and its byte count (the low 32).
        let spans: [UInt64]

        /// No keys.
        init() {
            bytes = []
            spans = []
        }

        /// Keys at `spans` of `bytes`; each span must lie inside `bytes` (the cache reader checks).
        init(bytes: [UInt8], spans: [UInt64]) {
            self.bytes = bytes
            self.spans = spans
        }

        var count: Int { spans.count }

        /// Where the key at `position` is in ``bytes``.
        func span(at position: Int) -> Range<Int> {
            let span = spans[position]
            let start = Int(truncatingIfNeeded: span >> 32)
            return start..<(start + Int(truncatingIfNeeded: span & 0xFFFF_FFFF))
        }

        /// The key at `position`, made from its bytes.
        func key(at position: Int) -> String {
            bytes.withUnsafeBytes {
                String(decoding: UnsafeRawBufferPointer(rebasing: $0[span(at: position)]), as: UTF8.self)
            }
        }
    }

    /// The keys kept as bytes: positions `0..<stored.count`.
    private(set) var stored: Stored
    /// The keys added as Strings, after the stored ones.
    private var added: [String] = []
    /// Open addressing, linear probing: a key's position, or -1 for an empty bucket. Holds the
    /// ASCII keys; the count is a power of two at least twice the number of keys.
    private var buckets: [Int32]
    /// The positions of keys that are not ASCII.
    private var unhashed: [Int32] = []

    /// An empty index with room for `capacity` keys before it grows.
    init(capacity: Int = 0) {
        stored = Stored()
        buckets = [Int32](repeating: -1, count: Self.bucketCount(for: capacity))
        added.reserveCapacity(capacity)
    }

    /// An index of `keys`, in their order, keeping the array as it is (no key is copied); nil
    /// when one is not ASCII or repeats (add them one at a time then: ``KeyTable/set(_:forKey:)``).
    init?(asciiUniqueKeys keys: [String]) {
        stored = Stored()
        added = keys
        buckets = [Int32](repeating: -1, count: Self.bucketCount(for: keys.count))
        let complete = buckets.withUnsafeMutableBufferPointer { buckets in
            let mask = buckets.count - 1
            for position in keys.indices {
                let (hash, isASCII) = Self.hash(keys[position])
                guard isASCII else { return false }
                var bucket = Int(truncatingIfNeeded: hash) & mask
                while buckets[bucket] >= 0 {
                    if keys[Int(buckets[bucket])] == keys[position] { return false }
                    bucket = (bucket + 1) & mask
                }
                buckets[bucket] = Int32(position)
            }
            return true
        }
        guard complete else { return nil }
    }

    /// An index of stored keys, each placed by its hash in `hashes` (``hash(_:)`` of its bytes)
    /// unless its position is in `notASCII` (in position order). Nil when an ASCII key repeats.
    ///
    /// A repeated key that is not ASCII is not looked for (that would compare every pair): the
    /// cache writes the keys of one config, which never repeat, so only a made-up file has one,
    /// and a read then finds its first value.
    init?(stored: Stored, hashes: [UInt64], notASCII: [Int32]) {
        precondition(hashes.count == stored.count, "a hash for every key")
        self.stored = stored
        unhashed = notASCII
        buckets = [Int32](repeating: -1, count: Self.bucketCount(for: stored.count))
        var next = 0
        let complete = buckets.withUnsafeMutableBufferPointer { buckets in
            stored.bytes.withUnsafeBytes { bytes in
                let mask = buckets.count - 1
                for position in hashes.indices {
                    if next < notASCII.count, Int(notASCII[next]) == position {
                        next += 1
                        continue
                    }
                    let hash = hashes[position]
                    let key = UnsafeRawBufferPointer(rebasing: bytes[stored.span(at: position)])
                    var bucket = Int(truncatingIfNeeded: hash) & mask
                    while buckets[bucket] >= 0 {
                        let other = Int(buckets[bucket])
                        if hashes[other] == hash,
                            Self.equal(key, UnsafeRawBufferPointer(rebasing: bytes[stored.span(at: other)]))
                        {
                            return false
                        }
                        bucket = (bucket + 1) & mask
                    }
                    buckets[bucket] = Int32(position)
                }
                return true
            }
        }
        guard complete else { return nil }
        precondition(next == notASCII.count, "the positions of keys that are not ASCII, in order")
    }

    var count: Int { stored.count + added.count }

    /// The key at `position` (a stored key is made into a String here).
    func key(at position: Int) -> String {
        position < stored.count ? stored.key(at: position) : added[position - stored.count]
    }

    /// Every key, in position order.
    var keys: [String] { (0..<stored.count).map(stored.key(at:)) + added }

    /// Where `key` is, or nil.
    @inline(__always)
    func position(of key: String) -> Int? { find(key).position }

    /// Where `key` is, or nil, with the hash it was looked up by (``add(_:hash:isASCII:)`` takes it).
    @inline(__always)
    func find(_ key: String) -> (position: Int?, hash: UInt64, isASCII: Bool) {
        let found =
            key.utf8.withContiguousStorageIfAvailable { find(key, utf8: UnsafeRawBufferPointer($0)) }
            // A bridged string without contiguous UTF-8 (on Apple platforms).
            ?? Array(key.utf8).withUnsafeBytes { find(key, utf8: $0) }
        return found
    }

    /// Adds a key ``find(_:)`` did not find, with what it answered; answers its position.
    mutating func add(_ key: String, hash: UInt64, isASCII: Bool) -> Int {
        let position = count
        added.append(key)
        guard isASCII else {
            unhashed.append(Int32(position))
            return position
        }
        if count * 2 > buckets.count {
            rehash(bucketCount: Self.bucketCount(for: count))
        } else {
            insert(Int32(position), hash: hash)
        }
        return position
    }

    // Inlined into the reads, as the hash is (a call each cost a tenth of a read).
    @inline(__always)
    private func find(_ key: String, utf8: UnsafeRawBufferPointer) -> (position: Int?, hash: UInt64, isASCII: Bool) {
        let (hash, orOfWords) = ByteHash.hash(utf8)
        guard ByteHash.isASCII(orOfWords) else { return (scan(for: key), hash, false) }
        let found = buckets.withUnsafeBufferPointer { buckets in
            stored.bytes.withUnsafeBytes { bytes -> Int? in
                let mask = buckets.count - 1
                var bucket = Int(truncatingIfNeeded: hash) & mask
                while true {
                    let position = Int(buckets[bucket])
                    if position < 0 { return nil }
                    if position < stored.count {
                        if Self.equal(utf8, UnsafeRawBufferPointer(rebasing: bytes[stored.span(at: position)])) {
                            return position
                        }
                    } else if added[position - stored.count] == key {
                        return position
                    }
                    bucket = (bucket + 1) & mask
                }
            }
        }
        if let found { return (found, hash, true) }
        return (unhashed.isEmpty ? nil : scanUnhashed(for: key), hash, true)
    }

    /// Where a key that is not ASCII is: another spelling of it may be there, ASCII or not.
    @inline(never)
    private func scan(for key: String) -> Int? {
        (0..<count).first { self.key(at: $0) == key }
    }

    /// Where the key that is not ASCII equal to an ASCII `key` is ("K" and U+212A KELVIN SIGN).
    @inline(never)
    private func scanUnhashed(for key: String) -> Int? {
        for position in unhashed where self.key(at: Int(position)) == key { return Int(position) }
        return nil
    }

    private mutating func insert(_ position: Int32, hash: UInt64) {
        let mask = buckets.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while buckets[bucket] >= 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = position
    }

    private mutating func rehash(bucketCount: Int) {
        buckets = [Int32](repeating: -1, count: bucketCount)
        let unhashedPositions = Set(unhashed)
        for position in 0..<count where !unhashedPositions.contains(Int32(position)) {
            let hash =
                position < stored.count
                ? stored.bytes.withUnsafeBytes {
                    ByteHash.hash(UnsafeRawBufferPointer(rebasing: $0[stored.span(at: position)])).hash
                }
                : Self.hash(added[position - stored.count]).hash
            insert(Int32(position), hash: hash)
        }
    }

    /// A power of two at least twice `capacity` (a table at most half full stays fast to probe).
    private static func bucketCount(for capacity: Int) -> Int {
        var count = 8
        while count < capacity * 2 { count *= 2 }
        return count
    }

    /// Whether two byte ranges hold the same bytes: eight at a time, the last word (or the last
    /// four bytes) overlapping the one before, so a short key takes two comparisons, not a loop.
    @inline(__always)
    static func equal(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        let count = left.count
        guard count == right.count else { return false }
        if count >= 8 {
            var offset = 0
            while offset < count - 8 {
                guard Self.word(left, offset) == Self.word(right, offset) else { return false }
                offset += 8
            }
            return Self.word(left, count - 8) == Self.word(right, count - 8)
        }
        if count >= 4 {
            return left.loadUnaligned(as: UInt32.self) == right.loadUnaligned(as: UInt32.self)
                && left.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                    == right.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        }
        for offset in 0..<count where left[offset] != right[offset] { return false }
        return true
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// A hash of the key's UTF-8 bytes, and whether they are all ASCII.
    static func hash(_ key: String) -> (hash: UInt64, isASCII: Bool) {
        let (hash, orOfWords) =
            key.utf8.withContiguousStorageIfAvailable { ByteHash.hash(UnsafeRawBufferPointer($0)) }
            ?? Array(key.utf8).withUnsafeBytes { ByteHash.hash($0) }
        return (hash, ByteHash.isASCII(orOfWords))
    }
}
