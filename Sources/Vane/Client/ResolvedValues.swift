import VaneCore

/// The value every key reads as, worked out once per change so a read is one lookup in a
/// ``KeyTable``.
///
/// Order: local override › activated remote value › bundled default.
struct ResolvedValues: Sendable {
    private(set) var table: KeyTable<ResolvedValue>

    init(overrides: [String: String], active: FetchedConfig?, defaults: InAppDefaults) {
        var table = KeyTable<ResolvedValue>(
            capacity: max(defaults.entries.count, active?.values.count ?? 0) + overrides.count
        )
        for entry in defaults.entries { table.set(ResolvedValue(entry.value, source: .default), forKey: entry.key) }
        if let active {
            // Read once already (by the fetch, or stored so in the cache file).
            let values = active.values
            for index in values.keys.indices {
                table.set(ResolvedValue(values.values[index], source: .remote), forKey: values.keys[index])
            }
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
