/// Values by string key, in insertion order: a ``KeyIndex`` and a value at each of its positions.
struct KeyTable<Value>: Sendable where Value: Sendable {
    /// Where each key is.
    private(set) var index: KeyIndex
    /// The values, at their key's position.
    private(set) var values: [Value]

    /// An empty table with room for `capacity` keys before it grows.
    init(capacity: Int = 0) {
        index = KeyIndex(capacity: capacity)
        values = []
        values.reserveCapacity(capacity)
    }

    /// A table of `keys` and their `values` (as many), keeping the keys' array as it is. Keys
    /// that are not all ASCII, or a key that repeats, are set one at a time instead, as
    /// ``set(_:forKey:)`` does (a repeated key's last value counts).
    init(keys: [String], values: [Value]) {
        precondition(keys.count == values.count, "a value for every key")
        if let index = KeyIndex(asciiUniqueKeys: keys) {
            self.index = index
            self.values = values
            return
        }
        self = KeyTable(capacity: keys.count)
        for (key, value) in zip(keys, values) { set(value, forKey: key) }
    }

    /// A table over an index made already (a cache file's), a value for each of its keys.
    init(index: KeyIndex, values: [Value]) {
        precondition(index.count == values.count, "a value for every key")
        self.index = index
        self.values = values
    }

    var count: Int { values.count }

    /// The keys, in the order they were first set.
    var keys: [String] { index.keys }

    /// The value for `key`, or nil.
    subscript(key: String) -> Value? {
        guard let position = index.position(of: key) else { return nil }
        return values[position]
    }

    /// The value at a position ``position(of:)`` returned.
    func value(at position: Int) -> Value { values[position] }

    /// Where `key` is in ``keys`` and ``values``, or nil.
    func position(of key: String) -> Int? { index.position(of: key) }

    /// Replaces the value at a position ``position(of:)`` returned.
    mutating func setValue(_ value: Value, at position: Int) { values[position] = value }

    /// Sets the value of `key`, keeping its position when it is already there.
    mutating func set(_ value: Value, forKey key: String) {
        let found = index.find(key)
        if let position = found.position {
            values[position] = value
            return
        }
        _ = index.add(key, hash: found.hash, isASCII: found.isASCII)
        values.append(value)
    }
}
