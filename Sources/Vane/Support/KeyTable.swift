/// Values by string key, in insertion order, found through a hash of the key's UTF-8 bytes.
///
/// The SDK's reads are a lock and a lookup, measured against a bare `Dictionary` lookup
/// (docs/PERFORMANCE.md). Most of a `Dictionary<String, …>` lookup is hashing the key: SipHash-1-3
/// behind String's Unicode-normalisation checks. This table hashes ASCII keys with ``ByteHash``,
/// eight bytes at a time (keys come from the app and its own server, so there is no one to flood
/// it), which makes its lookup cheaper than `Dictionary`'s by about what the lock costs.
///
/// Equality is still String's (canonical equivalence), as with `Dictionary`: two spellings of one
/// non-ASCII key hash differently here, so keys that are not ASCII are not hashed but compared
/// one by one (apps and servers name keys in ASCII; the scan is for correctness).
struct KeyTable<Value>: Sendable where Value: Sendable {
    /// The keys, in the order they were first set.
    private(set) var keys: [String] = []
    /// The values, at their key's position.
    private(set) var values: [Value] = []
    /// Open addressing, linear probing: a key's position, or -1 for an empty bucket. Holds the
    /// ASCII keys; the count is a power of two at least twice the number of keys.
    private var buckets: [Int32]
    /// The positions of keys that are not ASCII.
    private var unhashed: [Int32] = []

    /// An empty table with room for `capacity` keys before it grows.
    init(capacity: Int = 0) {
        buckets = [Int32](repeating: -1, count: Self.bucketCount(for: capacity))
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// A table of `keys` and their `values` (as many), keeping the keys' array as it is (a start
    /// from the cache copies no key). Keys that are not all ASCII, or a key that repeats, are set
    /// one at a time instead, as ``set(_:forKey:)`` does (a repeated key's last value counts).
    init(keys: [String], values: [Value]) {
        precondition(keys.count == values.count, "a value for every key")
        self.keys = keys
        self.values = values
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
        guard !complete else { return }
        self = KeyTable(capacity: keys.count)
        for (key, value) in zip(keys, values) { set(value, forKey: key) }
    }

    var count: Int { keys.count }

    /// The value for `key`, or nil.
    subscript(key: String) -> Value? {
        guard let position = position(of: key) else { return nil }
        return values[position]
    }

    /// The value at a position ``position(of:)`` returned.
    func value(at position: Int) -> Value { values[position] }

    /// Where `key` is in ``keys`` and ``values``, or nil.
    func position(of key: String) -> Int? {
        let (hash, isASCII) = Self.hash(key)
        return position(of: key, hash: hash, isASCII: isASCII)
    }

    private func position(of key: String, hash: UInt64, isASCII: Bool) -> Int? {
        guard isASCII else {
            // Another spelling of the key may be stored, ASCII or not.
            return keys.firstIndex(of: key)
        }
        let found = buckets.withUnsafeBufferPointer { buckets -> Int? in
            let mask = buckets.count - 1
            var bucket = Int(truncatingIfNeeded: hash) & mask
            while true {
                let position = Int(buckets[bucket])
                if position < 0 { return nil }
                if keys[position] == key { return position }
                bucket = (bucket + 1) & mask
            }
        }
        if let found { return found }
        // An ASCII key can equal a stored key that is not ASCII ("K" and U+212A KELVIN SIGN).
        for position in unhashed where keys[Int(position)] == key { return Int(position) }
        return nil
    }

    /// Sets the value of `key`, keeping its position when it is already there.
    mutating func set(_ value: Value, forKey key: String) {
        let (hash, isASCII) = Self.hash(key)
        if let position = position(of: key, hash: hash, isASCII: isASCII) {
            values[position] = value
            return
        }
        let position = Int32(keys.count)
        keys.append(key)
        values.append(value)
        guard isASCII else {
            unhashed.append(position)
            return
        }
        if keys.count * 2 > buckets.count {
            rehash(bucketCount: Self.bucketCount(for: keys.count))
        } else {
            insert(position, hash: hash)
        }
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
        for position in keys.indices where !unhashedPositions.contains(Int32(position)) {
            insert(Int32(position), hash: Self.hash(keys[position]).hash)
        }
    }

    /// A power of two at least twice `capacity` (a table at most half full stays fast to probe).
    private static func bucketCount(for capacity: Int) -> Int {
        var count = 8
        while count < capacity * 2 { count *= 2 }
        return count
    }

    /// A hash of the key's UTF-8 bytes, and whether they are all ASCII.
    static func hash(_ key: String) -> (hash: UInt64, isASCII: Bool) {
        let (hash, orOfWords) =
            key.utf8.withContiguousStorageIfAvailable { ByteHash.hash(UnsafeRawBufferPointer($0)) }
            // A bridged string without contiguous UTF-8 (on Apple platforms).
            ?? Array(key.utf8).withUnsafeBytes { ByteHash.hash($0) }
        return (hash, ByteHash.isASCII(orOfWords))
    }
}
