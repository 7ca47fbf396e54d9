import VaneCore

/// A config's values in one order, each read once (``CoercedValue``): what resolution and the
/// cache file use.
///
/// The `[String: String]` that ``FetchedConfig/entries`` shows is made the first time something
/// asks for it (an activation's diff, a live update, the app), not when a cache is read: an SDK
/// start then hashes each key once, into the ``KeyTable`` reads use, rather than twice
/// (docs/PERFORMANCE.md, "SDK start").
final class ConfigEntries: Sendable {
    /// The keys, in the order given (a key repeated in a damaged cache file: its last value counts,
    /// here and in ``byKey``, as it does in a ``KeyTable``).
    let keys: [String]
    /// The values, at their key's position.
    let values: [CoercedValue]
    private let dictionary: LockedValue<[String: String]?>

    /// Values read from a cache file.
    init(keys: [String], values: [CoercedValue]) {
        self.keys = keys
        self.values = values
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
        self.keys = keys
        self.values = values
        dictionary = LockedValue(entries)
    }

    var count: Int { keys.count }

    /// The values by key, as sent; made once, on first use.
    var byKey: [String: String] {
        dictionary.withLockedValue { dictionary in
            if let dictionary { return dictionary }
            var made: [String: String] = [:]
            made.reserveCapacity(keys.count)
            for (key, value) in zip(keys, values) { made[key] = value.stringValue }
            dictionary = made
            return made
        }
    }
}
