import Foundation
import VaneCore

/// The exposures a client records on the first read of each key a running experiment controls,
/// found by the key's position in the ``ResolvedValues``: a read of any other key pays one
/// comparison, not a second lookup.
struct PendingExposures: Sendable {
    /// Per position in the resolved values, the index of its exposure in `pending`, or -1; empty
    /// when the active config has no experiment key with a value.
    private var slots: [Int32] = []
    /// Nil once recorded.
    private var pending: [Exposure?] = []
    /// Experiment keys no source has a value for: a read finds nothing, and is still exposed.
    private var absent: [String: Exposure] = [:]

    /// None.
    init() {}

    /// The exposures of the active config's experiment keys, except those a local override
    /// decides (the user does not see the variant).
    init(active: FetchedConfig?, resolved: ResolvedValues) {
        guard let active, active.metadata.values.contains(where: { $0.experiment != nil }),
            let unit = active.randomizationId
        else { return }
        for (key, metadata) in active.metadata {
            guard let assignment = metadata.experiment else { continue }
            let exposure = Exposure(
                flagKey: key,
                experiment: assignment.experiment,
                variant: assignment.variant,
                unit: unit,
                templateVersion: active.templateVersion,
                time: .distantPast
            )
            guard let position = resolved.table.position(of: key) else {
                absent[key] = exposure
                continue
            }
            guard resolved.source(at: position) != .override else { continue }
            if slots.isEmpty { slots = [Int32](repeating: -1, count: resolved.table.count) }
            slots[position] = Int32(pending.count)
            pending.append(exposure)
        }
    }

    /// The exposure of the key at `position` in the resolved values, if it has one not yet taken.
    mutating func take(at position: Int) -> Exposure? {
        guard !slots.isEmpty else { return nil }
        let slot = Int(slots[position])
        guard slot >= 0, let exposure = pending[slot] else { return nil }
        pending[slot] = nil
        return exposure
    }

    /// The exposure of an experiment key that no source has a value for, if not yet taken.
    mutating func take(absentKey key: String) -> Exposure? {
        absent.isEmpty ? nil : absent.removeValue(forKey: key)
    }

    /// The exposures not yet taken, by key (for snapshots).
    var byKey: [String: Exposure] {
        var exposures = absent
        for case let exposure? in pending { exposures[exposure.flagKey] = exposure }
        return exposures
    }
}
