import VaneCore

/// The value every key reads as, worked out once per change so a read is one lookup in a
/// ``KeyTable``.
///
/// Order: local override › activated remote value › bundled default.
///
/// Remote values left in a cache file's bytes (``StoredEntries``) are made by their key's first
/// read through ``value(at:)``, and kept: a start from the cache makes no value it does not read.
/// The table holds each key's slot in ``made`` (or -1, not made yet), a trivial `Int32`, so that
/// a start fills and a client's end frees one flat array rather than a value per key.
struct ResolvedValues: Sendable {
    /// Each key's slot in ``made``; -1 for a stored remote value not made yet.
    private(set) var table: KeyTable<Int32>
    /// The values made so far.
    private var made: [ResolvedValue]
    /// Where the values not made yet are.
    private let stored: StoredEntries

    init(overrides: [String: String], active: FetchedConfig?, defaults: InAppDefaults) {
        var stored = StoredEntries()
        if let active {
            // The active config's keys as they are, each value read once already (by the fetch, or
            // stored so in the cache file), then the defaults of keys the server did not send.
            switch active.values.storage {
            case .made(let keys, let values):
                // A key repeated in a damaged earlier cache file is set again: its last slot counts.
                table = KeyTable(keys: keys, values: (0..<Int32(truncatingIfNeeded: keys.count)).map { $0 })
                made = values.map { ResolvedValue($0, source: .remote) }
            case .stored(let entries):
                table = KeyTable(index: entries.index, values: [Int32](repeating: -1, count: entries.count))
                made = []
                stored = entries
            }
            self.stored = stored
            for entry in defaults.entries where table.position(of: entry.key) == nil {
                set(ResolvedValue(entry.value, source: .default), forKey: entry.key)
            }
        } else {
            table = KeyTable(capacity: defaults.entries.count + overrides.count)
            made = []
            self.stored = stored
            made.reserveCapacity(defaults.entries.count + overrides.count)
            for entry in defaults.entries { set(ResolvedValue(entry.value, source: .default), forKey: entry.key) }
        }
        for (key, text) in overrides { set(ResolvedValue(CoercedValue(text), source: .override), forKey: key) }
    }

    /// Sets the value of `key`, keeping its position when it is already there.
    private mutating func set(_ value: ResolvedValue, forKey key: String) {
        if let position = table.position(of: key), table.value(at: position) >= 0 {
            made[Int(table.value(at: position))] = value
            return
        }
        table.set(Int32(truncatingIfNeeded: made.count), forKey: key)
        made.append(value)
    }

    /// The value for `key`, or nil (a stored value is made, not kept: see ``value(at:)``).
    subscript(key: String) -> ResolvedValue? {
        guard let position = table.position(of: key) else { return nil }
        return peek(at: position)
    }

    /// The value at a position the table gave; a stored remote value is made here the first time
    /// and kept, so later reads of the key find it.
    @inline(__always)
    mutating func value(at position: Int) -> ResolvedValue {
        let slot = table.value(at: position)
        if slot >= 0 { return made[Int(slot)] }
        return make(at: position)
    }

    /// Makes the stored value at `position` and keeps it (once per key: out of the reads' line).
    @inline(never)
    private mutating func make(at position: Int) -> ResolvedValue {
        let value = ResolvedValue(stored.value(at: position), source: .remote)
        table.setValue(Int32(truncatingIfNeeded: made.count), at: position)
        made.append(value)
        return value
    }

    /// The value at a position the table gave, without keeping a stored one made here.
    func peek(at position: Int) -> ResolvedValue {
        let slot = table.value(at: position)
        return slot >= 0 ? made[Int(slot)] : ResolvedValue(stored.value(at: position), source: .remote)
    }

    /// Where the value at a position comes from (without making it).
    func source(at position: Int) -> ValueSource {
        let slot = table.value(at: position)
        return slot >= 0 ? made[Int(slot)].source : .remote
    }

    /// Makes every stored value not made yet; afterwards copies of this (a snapshot, the debug
    /// menu) share its arrays, and reads never write to them.
    mutating func makeAll() {
        guard made.count < table.count else { return }
        for position in 0..<table.count where table.value(at: position) < 0 { _ = value(at: position) }
    }

    /// Every key some source has a value for, in no particular order.
    var keys: [String] { table.keys }

    /// The keys whose value or source differ between two resolutions.
    static func changedKeys(from old: ResolvedValues, to new: ResolvedValues) -> Set<String> {
        var changed = Set<String>()
        for (position, key) in new.table.keys.enumerated() where old[key] != new.peek(at: position) {
            changed.insert(key)
        }
        for key in old.table.keys where new[key] == nil { changed.insert(key) }
        return changed
    }
}
