import VaneCore

/// A config's values in one order, each read once (``CoercedValue``): what resolution and the
/// cache file use.
///
/// Values read from a `"VNC4"` cache file stay bytes of the file (``StoredEntries``) until
/// something asks for them: an SDK start makes no String and hashes no key (docs/PERFORMANCE.md,
/// "SDK start"). The `[String: String]` that ``FetchedConfig/entries`` shows is made the first
/// time something asks for it (an activation's diff, a live update, the app).
final class ConfigEntries: Sendable {
    /// Where the keys and values are.
    enum Storage: Sendable {
        /// Made in memory (a fetch, a dictionary, an earlier cache format). A key repeated in a
        /// damaged earlier cache file: its last value counts, here and in ``byKey``, as it does in
        /// a ``KeyTable``.
        case made(keys: [String], values: [CoercedValue])
        /// In a cache file's bytes.
        case stored(StoredEntries)
    }

    let storage: Storage
    private let dictionary: LockedValue<[String: String]?>

    /// Values read from a cache file of an earlier format.
    init(keys: [String], values: [CoercedValue]) {
        storage = .made(keys: keys, values: values)
        dictionary = LockedValue(nil)
    }

    /// Values left in a cache file's bytes.
    init(stored: StoredEntries) {
        storage = .stored(stored)
        dictionary = LockedValue(nil)
    }

    /// Values given by key; each is read (coerced) here.
    init(_ entries: [String: String]) {
        var keys: [String] = []
        var values: [CoercedValue] = []
        keys.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        for (key, text) in entries {
            keys.append(key)
            values.append(CoercedValue(text))
        }
        storage = .made(keys: keys, values: values)
        dictionary = LockedValue(entries)
    }

    var count: Int {
        switch storage {
        case .made(let keys, _): keys.count
        case .stored(let stored): stored.count
        }
    }

    /// The key at `position` (`0..<count`).
    func key(at position: Int) -> String {
        switch storage {
        case .made(let keys, _): keys[position]
        case .stored(let stored): stored.key(at: position)
        }
    }

    /// The value at `position` (`0..<count`).
    func value(at position: Int) -> CoercedValue {
        switch storage {
        case .made(_, let values): values[position]
        case .stored(let stored): stored.value(at: position)
        }
    }

    /// The values by key, as sent; made once, on first use.
    var byKey: [String: String] {
        dictionary.withLockedValue { dictionary in
            if let dictionary { return dictionary }
            var made: [String: String] = [:]
            made.reserveCapacity(count)
            for position in 0..<count { made[key(at: position)] = value(at: position).stringValue }
            dictionary = made
            return made
        }
    }
}
