import VaneCore

/// The value every key reads as, worked out once per change so a read is one lookup in a
/// ``KeyTable``.
///
/// Order: local override › activated remote value › bundled default.
struct ResolvedValues: Sendable {
    private(set) var table: KeyTable<ResolvedValue>

    init(overrides: [String: String], active: FetchedConfig?, defaults: InAppDefaults) {
        var table: KeyTable<ResolvedValue>
        if let active {
            // The active config's keys as they are, each value read once already (by the fetch, or
            // stored so in the cache file), then the defaults of keys the server did not send.
            let entries = active.values
            table = KeyTable(keys: entries.keys, values: entries.values.map { ResolvedValue($0, source: .remote) })
            for entry in defaults.entries where table.position(of: entry.key) == nil {
                table.set(ResolvedValue(entry.value, source: .default), forKey: entry.key)
            }
        } else {
            table = KeyTable(capacity: defaults.entries.count + overrides.count)
            for entry in defaults.entries { table.set(ResolvedValue(entry.value, source: .default), forKey: entry.key) }
        }
        for (key, text) in overrides { table.set(ResolvedValue(CoercedValue(text), source: .override), forKey: key) }
        self.table = table
    }

    subscript(key: String) -> ResolvedValue? { table[key] }

    /// Every key some source has a value for, in no particular order.
    var keys: [String] { table.keys }

    /// The keys whose value or source differ between two resolutions.
    static func changedKeys(from old: ResolvedValues, to new: ResolvedValues) -> Set<String> {
        var changed = Set<String>()
        for (position, key) in new.table.keys.enumerated() where old[key] != new.table.value(at: position) {
            changed.insert(key)
        }
        for key in old.table.keys where new[key] == nil { changed.insert(key) }
        return changed
    }
}
