package import ExperimentStatistics

/// What the server keeps about one unit in one experiment, so a new event changes the
/// experiment's sums without reading the unit's other events again.
package struct ExperimentUnit: Sendable, Hashable {
    /// The variant of the unit's first exposure.
    package var variant: String
    /// When the unit was first exposed (the app's clock, milliseconds): metric events before it
    /// do not count.
    package var firstExposure: Int64
    /// The unit was also exposed to another variant: it is counted once in the health checks and
    /// left out of every variant's sums.
    package var isInSeveralVariants: Bool
    /// Per event name the experiment's metrics read: the unit's events at or after its first
    /// exposure.
    package var totals: [String: EventTotal]
}

/// The number and the summed values of one unit's events of one name.
package struct EventTotal: Sendable, Hashable, Codable {
    package var count: Int
    package var sum: Double

    package static let none = EventTotal(count: 0, sum: 0)

    package mutating func add(_ value: Double) {
        count += 1
        sum += value
    }
}

/// An experiment's running sums: what results are computed from, whatever the number of events.
package struct ExperimentTally: Sendable, Hashable, Codable {
    /// One variant's sums over the units it contains.
    package struct VariantSums: Sendable, Hashable, Codable {
        package var exposedUnits = 0
        package var metrics: [String: MetricAggregates] = [:]
        package var ratioMetrics: [String: RatioMetricAggregates] = [:]
    }

    /// By variant name; a variant nobody was exposed to yet is missing.
    package var variants: [String: VariantSums] = [:]
    /// Units exposed to more than one variant (each counted once; none of them is in `variants`).
    package var unitsInSeveralVariants = 0
    /// Exposures naming a template version fetch never served in the environment (nil in sums
    /// stored before the check existed: none).
    package var exposuresWithoutFetch: Int?

    /// The statistics' input: every variant of the definition in its order, with every metric
    /// (zero sums where no event arrived yet).
    package func aggregates(for definition: ExperimentDefinition) -> ExperimentAggregates {
        ExperimentAggregates(
            controlVariant: definition.controlVariant,
            variants: definition.variants.map { variant in
                let sums = variants[variant.name] ?? VariantSums()
                var metrics: [String: MetricAggregates] = [:]
                var ratios: [String: RatioMetricAggregates] = [:]
                for metric in definition.metrics {
                    if metric.kind == .ratio {
                        ratios[metric.name] = sums.ratioMetrics[metric.name] ?? RatioMetricAggregates.zero
                    } else {
                        metrics[metric.name] = sums.metrics[metric.name] ?? MetricAggregates.zero
                    }
                }
                return VariantAggregates(
                    name: variant.name,
                    splitWeight: variant.weight,
                    exposedUnits: sums.exposedUnits,
                    metrics: metrics,
                    ratioMetrics: ratios
                )
            }
        )
    }
}

/// The rules that turn events into an experiment's sums, as pure functions of what is stored
/// (docs/EXPERIMENTS.md, "How events are counted"):
///
/// - a unit belongs to the variant of its first exposure, and only its metric events at or after
///   that exposure count;
/// - an exposure that arrives late, earlier than the first one known, moves the first exposure,
///   and the unit's totals are recomputed from its stored events (``unitsToReplay(_:exposures:)``);
/// - a unit exposed to a second variant is counted once in ``ExperimentTally/unitsInSeveralVariants``
///   and its contribution leaves every variant's sums;
/// - every change to a unit takes its old contribution out of the sums and puts its new one in,
///   so the sums always equal sums computed from scratch.
package enum ExperimentAggregation {
    /// An exposure of one unit to one of the experiment's variants.
    package struct Exposure: Sendable, Hashable {
        package var unit: String
        package var variant: String
        package var time: Int64
    }

    /// A metric event of one unit.
    package struct MetricEvent: Sendable, Hashable {
        package var unit: String
        package var name: String
        package var time: Int64
        package var value: Double
    }

    /// The event names an experiment's metrics read.
    package static func eventNames(_ definition: ExperimentDefinition) -> Set<String> {
        Set(definition.metrics.flatMap { [$0.event] + ($0.denominatorEvent.map { [$0] } ?? []) })
    }

    /// The event names any of `experiments` reads: a metric event with another name counts for
    /// none of them.
    package static func eventNames(_ experiments: [Experiment]) -> Set<String> {
        experiments.reduce(into: Set<String>()) { names, experiment in
            names.formUnion(eventNames(experiment.definition))
        }
    }

    /// The units whose totals must be recomputed from their stored events before `exposures` are
    /// applied: those exposed for the first time, and those whose first exposure moves earlier.
    package static func unitsToReplay(_ units: [String: ExperimentUnit], exposures: [Exposure]) -> Set<String> {
        var replay: Set<String> = []
        for exposure in exposures {
            guard let unit = units[exposure.unit] else {
                replay.insert(exposure.unit)
                continue
            }
            if !unit.isInSeveralVariants && exposure.time < unit.firstExposure { replay.insert(exposure.unit) }
        }
        return replay
    }

    /// Applies a batch of new events to `units` and `tally`.
    ///
    /// - Parameters:
    ///   - units: The stored state of every unit the batch names (missing: never exposed).
    ///   - exposures: The batch's exposures to this experiment's variants.
    ///   - metrics: The batch's metric events whose names the experiment reads.
    ///   - replayed: For each unit of ``unitsToReplay(_:exposures:)``, all its stored metric
    ///     events of those names, the batch's included.
    /// - Returns: The units whose state changed, to be stored, in key order (the order their rows
    ///   are written and locked in).
    package static func apply(
        _ definition: ExperimentDefinition,
        tally: inout ExperimentTally,
        units: inout [String: ExperimentUnit],
        exposures: [Exposure],
        metrics: [MetricEvent],
        replayed: [String: [MetricEvent]]
    ) -> [String] {
        let names = eventNames(definition)
        let replay = unitsToReplay(units, exposures: exposures)
        let exposuresByUnit = Dictionary(grouping: exposures, by: \.unit)
        let metricsByUnit = Dictionary(grouping: metrics.filter { names.contains($0.name) }, by: \.unit)
        var changed: [String] = []
        for key in Set(exposuresByUnit.keys).union(metricsByUnit.keys).sorted() {
            let old = units[key]
            var new = old
            for exposure in (exposuresByUnit[key] ?? []).sorted(by: { $0.time < $1.time }) {
                if var unit = new {
                    if exposure.variant != unit.variant {
                        unit.isInSeveralVariants = true
                    } else if exposure.time < unit.firstExposure {
                        unit.firstExposure = exposure.time
                    }
                    new = unit
                } else {
                    new = ExperimentUnit(
                        variant: exposure.variant,
                        firstExposure: exposure.time,
                        isInSeveralVariants: false,
                        totals: [:]
                    )
                }
            }
            // A metric event of a unit never exposed is kept raw and counted at its exposure.
            guard var unit = new else { continue }
            let counted: [MetricEvent]
            if replay.contains(key) {
                unit.totals = [:]
                counted = replayed[key] ?? []
            } else {
                counted = metricsByUnit[key] ?? []
            }
            for event in counted where names.contains(event.name) && event.time >= unit.firstExposure {
                unit.totals[event.name, default: .none].add(event.value)
            }
            guard unit != old else { continue }
            if let old { tally.add(old, sign: -1, definition: definition) }
            tally.add(unit, sign: 1, definition: definition)
            if unit.isInSeveralVariants && old?.isInSeveralVariants != true { tally.unitsInSeveralVariants += 1 }
            units[key] = unit
            changed.append(key)
        }
        return changed
    }
}

extension ExperimentTally {
    /// Adds (`sign` 1) or takes out (`sign` −1) one unit's contribution; a unit in several
    /// variants contributes nothing.
    package mutating func add(_ unit: ExperimentUnit, sign: Int, definition: ExperimentDefinition) {
        guard !unit.isInSeveralVariants else { return }
        // Changed in place: a copy of the variant's sums taken out and put back copied its
        // dictionaries for every unit counted.
        variants[unit.variant, default: VariantSums()].add(unit, sign: sign, definition: definition)
    }
}

extension ExperimentTally.VariantSums {
    fileprivate mutating func add(_ unit: ExperimentUnit, sign: Int, definition: ExperimentDefinition) {
        let s = Double(sign)
        exposedUnits += sign
        for metric in definition.metrics {
            let total = unit.totals[metric.event] ?? .none
            if metric.kind == .ratio {
                let y = (metric.denominatorEvent.flatMap { unit.totals[$0] } ?? .none).sum
                Self.add(x: total.sum, y: y, sign: s, to: &ratioMetrics[metric.name, default: .zero])
            } else {
                Self.add(total, sign: sign, to: &metrics[metric.name, default: .zero])
            }
        }
    }

    private static func add(x: Double, y: Double, sign s: Double, to ratio: inout RatioMetricAggregates) {
        ratio.numeratorSum += s * x
        ratio.denominatorSum += s * y
        // Taking a unit out can leave a rounding error below zero; a square sum cannot be.
        ratio.numeratorSumOfSquares = max(0, ratio.numeratorSumOfSquares + s * x * x)
        ratio.denominatorSumOfSquares = max(0, ratio.denominatorSumOfSquares + s * y * y)
        ratio.productSum += s * x * y
    }

    private static func add(_ total: EventTotal, sign: Int, to sums: inout MetricAggregates) {
        let s = Double(sign)
        if total.count > 0 { sums.convertedUnits += sign }
        sums.valueSum += s * total.sum
        sums.valueSumOfSquares = max(0, sums.valueSumOfSquares + s * total.sum * total.sum)
    }
}
