import VaneCore

/// The value every key reads as, worked out once per change so a read is one dictionary lookup.
///
/// Order: local override › activated remote value › bundled default.
struct ResolvedValues: Sendable {
    private(set) var values: [String: ResolvedValue]

    init(overrides: [String: String], active: FetchedConfig?, defaults: InAppDefaults) {
        var values: [String: ResolvedValue] = [:]
        values.reserveCapacity(defaults.entries.count + (active?.entries.count ?? 0) + overrides.count)
        for entry in defaults.entries { values[entry.key] = ResolvedValue(entry.value, source: .default) }
        if let active {
            for (key, text) in active.entries { values[key] = ResolvedValue(CoercedValue(text), source: .remote) }
        }
        for (key, text) in overrides { values[key] = ResolvedValue(CoercedValue(text), source: .override) }
        self.values = values
    }

    subscript(key: String) -> ResolvedValue? { values[key] }

    /// The keys whose value or source differ between two resolutions.
    static func changedKeys(from old: ResolvedValues, to new: ResolvedValues) -> Set<String> {
        var changed = Set<String>()
        for (key, value) in new.values where old.values[key] != value { changed.insert(key) }
        for key in old.values.keys where new.values[key] == nil { changed.insert(key) }
        return changed
    }
}
