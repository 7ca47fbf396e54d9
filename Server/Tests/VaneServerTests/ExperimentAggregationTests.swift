import ExperimentStatistics
import Testing

@testable import VaneServer
@testable import VaneServerCore

/// The counting rules (issue #15): the sums kept as events arrive, in any order and in any
/// batches, equal the sums computed from all events at once.
@Suite struct ExperimentAggregationTests {
    typealias Exposure = ExperimentAggregation.Exposure
    typealias MetricEvent = ExperimentAggregation.MetricEvent

    static let definition = ExperimentDefinition(
        key: "checkout-button",
        hypothesis: "",
        parameters: ["checkout_variant"],
        variants: [
            ExperimentVariant(name: "control", condition: nil, weight: 50),
            ExperimentVariant(name: "new-flow", condition: "checkout_test_b", weight: 50),
        ],
        controlVariant: "control",
        primaryMetric: ExperimentMetric(name: "purchase", event: "purchase", kind: .conversion),
        guardrailMetrics: [
            ExperimentMetric(name: "order_value", event: "purchase", kind: .mean),
            ExperimentMetric(name: "revenue_per_session", event: "purchase", kind: .ratio, denominatorEvent: "session"),
        ],
        method: .sequential
    )

    /// The sums from all events at once: the definition of what the kept sums must be.
    static func fromScratch(_ exposures: [Exposure], _ metrics: [MetricEvent]) -> ExperimentTally {
        var tally = ExperimentTally()
        let names = ExperimentAggregation.eventNames(definition)
        for (key, seen) in Dictionary(grouping: exposures, by: \.unit) {
            let first = seen.map(\.time).min() ?? 0
            var unit = ExperimentUnit(
                variant: seen.min { ($0.time, $0.variant) < ($1.time, $1.variant) }?.variant ?? "",
                firstExposure: first,
                isInSeveralVariants: Set(seen.map(\.variant)).count > 1,
                totals: [:]
            )
            for event in metrics where event.unit == key && event.time >= first && names.contains(event.name) {
                unit.totals[event.name, default: .none].add(event.value)
            }
            tally.add(unit, sign: 1, definition: definition)
            if unit.isInSeveralVariants { tally.unitsInSeveralVariants += 1 }
        }
        return tally
    }

    /// Applies `batches` one by one as the store does: unit states kept between batches, replays
    /// answered from every event applied so far plus the batch's own.
    static func incrementally(_ batches: [([Exposure], [MetricEvent])]) -> ExperimentTally {
        var tally = ExperimentTally()
        var units: [String: ExperimentUnit] = [:]
        var stored: [MetricEvent] = []
        for (exposures, metrics) in batches {
            stored += metrics
            let replay = ExperimentAggregation.unitsToReplay(units, exposures: exposures)
            let replayed = Dictionary(grouping: stored.filter { replay.contains($0.unit) }, by: \.unit)
            _ = ExperimentAggregation.apply(
                definition,
                tally: &tally,
                units: &units,
                exposures: exposures,
                metrics: metrics,
                replayed: replayed
            )
        }
        return tally
    }

    static func expectClose(_ kept: ExperimentTally, _ expected: ExperimentTally, _ comment: String = "") {
        #expect(kept.unitsInSeveralVariants == expected.unitsInSeveralVariants, "\(comment)")
        let keptAggregates = kept.aggregates(for: definition)
        let expectedAggregates = expected.aggregates(for: definition)
        for (a, b) in zip(keptAggregates.variants, expectedAggregates.variants) {
            #expect(a.exposedUnits == b.exposedUnits, "\(a.name) \(comment)")
            for (name, sums) in b.metrics {
                let got = a.metrics[name] ?? MetricAggregates.zero
                #expect(got.convertedUnits == sums.convertedUnits, "\(a.name) \(name) \(comment)")
                #expect(abs(got.valueSum - sums.valueSum) <= 1e-9 * max(1, abs(sums.valueSum)), "\(name) \(comment)")
                #expect(
                    abs(got.valueSumOfSquares - sums.valueSumOfSquares) <= 1e-9 * max(1, sums.valueSumOfSquares),
                    "\(name) \(comment)"
                )
            }
            for (name, sums) in b.ratioMetrics {
                let got = a.ratioMetrics[name] ?? RatioMetricAggregates.zero
                for (x, y) in [
                    (got.numeratorSum, sums.numeratorSum), (got.denominatorSum, sums.denominatorSum),
                    (got.productSum, sums.productSum), (got.numeratorSumOfSquares, sums.numeratorSumOfSquares),
                    (got.denominatorSumOfSquares, sums.denominatorSumOfSquares),
                ] {
                    #expect(abs(x - y) <= 1e-9 * max(1, abs(y)), "\(name) \(comment)")
                }
            }
        }
    }

    @Test func onlyMetricEventsFromTheFirstExposureOnCount() {
        let tally = Self.incrementally([
            ([], [MetricEvent(unit: "u1", name: "purchase", time: 50, value: 10)]),
            ([Exposure(unit: "u1", variant: "control", time: 100)], []),
            ([], [MetricEvent(unit: "u1", name: "purchase", time: 150, value: 30)]),
        ])
        let control = tally.variants["control"]
        #expect(control?.exposedUnits == 1)
        #expect(control?.metrics["purchase"]?.convertedUnits == 1)
        #expect(control?.metrics["order_value"]?.valueSum == 30, "the purchase before the exposure does not count")
    }

    @Test func aLateExposureRecountsTheUnitsStoredEvents() {
        // The exposure at 40 arrives after the one at 100 (the app was offline in between).
        let tally = Self.incrementally([
            (
                [Exposure(unit: "u1", variant: "new-flow", time: 100)],
                [MetricEvent(unit: "u1", name: "purchase", time: 50, value: 10)]
            ),
            ([Exposure(unit: "u1", variant: "new-flow", time: 40)], []),
        ])
        #expect(tally.variants["new-flow"]?.exposedUnits == 1)
        #expect(tally.variants["new-flow"]?.metrics["order_value"]?.valueSum == 10)
    }

    @Test func aUnitInTwoVariantsIsCountedOnceAndLeftOut() {
        let tally = Self.incrementally([
            (
                [Exposure(unit: "u1", variant: "control", time: 100)],
                [MetricEvent(unit: "u1", name: "purchase", time: 120, value: 10)]
            ),
            ([Exposure(unit: "u2", variant: "control", time: 100)], []),
            ([Exposure(unit: "u1", variant: "new-flow", time: 130)], []),
            (
                [Exposure(unit: "u1", variant: "control", time: 140)],
                [MetricEvent(unit: "u1", name: "purchase", time: 150, value: 5)]
            ),
        ])
        #expect(tally.unitsInSeveralVariants == 1)
        #expect(tally.variants["control"]?.exposedUnits == 1, "only u2")
        #expect(tally.variants["new-flow"]?.exposedUnits ?? 0 == 0)
        #expect(tally.variants["control"]?.metrics["purchase"]?.convertedUnits == 0)
        #expect(tally.variants["control"]?.metrics["order_value"]?.valueSum == 0)
    }

    @Test func aRepeatedExposureChangesNothing() {
        let once = Self.incrementally([([Exposure(unit: "u1", variant: "control", time: 100)], [])])
        let twice = Self.incrementally([
            ([Exposure(unit: "u1", variant: "control", time: 100)], []),
            ([Exposure(unit: "u1", variant: "control", time: 200)], []),
        ])
        #expect(once == twice)
    }

    /// 400 units' events, shuffled and cut into batches of random sizes, give the sums computed
    /// from scratch, whatever the order.
    @Test(arguments: [1, 2, 3, 4, 5]) func anyOrderAndBatchingGivesTheSumsFromScratch(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var exposures: [Exposure] = []
        var metrics: [MetricEvent] = []
        for index in 0..<400 {
            let unit = "unit-\(index)"
            let variant = random.next() % 2 == 0 ? "control" : "new-flow"
            let exposureCount = Int(random.next() % 3)
            for _ in 0..<exposureCount {
                // One unit in twenty also sees the other variant.
                let other = random.next() % 20 == 0
                exposures.append(
                    Exposure(
                        unit: unit,
                        variant: other ? (variant == "control" ? "new-flow" : "control") : variant,
                        time: Int64(random.next() % 1_000)
                    )
                )
            }
            for _ in 0..<Int(random.next() % 4) {
                let name = ["purchase", "session", "unrelated"][Int(random.next() % 3)]
                metrics.append(
                    MetricEvent(
                        unit: unit,
                        name: name,
                        time: Int64(random.next() % 1_000),
                        value: Double(random.next() % 10_000) / 100
                    )
                )
            }
        }
        enum Item {
            case exposure(Exposure)
            case metric(MetricEvent)
        }
        var items = exposures.map(Item.exposure) + metrics.map(Item.metric)
        items.shuffle(using: &random)
        var batches: [([Exposure], [MetricEvent])] = []
        var start = 0
        while start < items.count {
            let end = min(items.count, start + 1 + Int(random.next() % 50))
            var batch: ([Exposure], [MetricEvent]) = ([], [])
            for item in items[start..<end] {
                switch item {
                case .exposure(let exposure): batch.0.append(exposure)
                case .metric(let metric): batch.1.append(metric)
                }
            }
            batches.append(batch)
            start = end
        }
        let expected = Self.fromScratch(exposures, metrics)
        #expect(expected.unitsInSeveralVariants > 0, "the data has units in two variants")
        #expect((expected.variants["control"]?.metrics["purchase"]?.convertedUnits ?? 0) > 0)
        Self.expectClose(Self.incrementally(batches), expected, "seed \(seed)")
    }
}
