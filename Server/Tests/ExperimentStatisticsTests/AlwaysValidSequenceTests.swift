import ExperimentStatistics
import Testing

/// The always-valid reading over looks (Johari, Pekelis, Walsh: p_n = min(p_{n−1}, 1/Λ_n), the
/// confidence sequence as the running intersection) and the relative interval as the dual of the
/// p-value.
@Suite struct AlwaysValidSequenceTests {
    /// Control converts 10 % throughout; treatment looks much better early, then regresses:
    /// (units per variant, control's conversions, treatment's conversions) at each look.
    static let looks: [(units: Int, control: Int, treatment: Int)] = [
        (1_000, 100, 120), (2_000, 200, 290), (4_000, 400, 500), (8_000, 800, 880), (16_000, 1_600, 1_700),
    ]

    @Test func reportedPValueNeverIncreasesAndIntervalsNeverWiden() throws {
        var history = AlwaysValidHistory()
        var previous: AlwaysValidSequence?
        var latest: [Double] = []
        for look in Self.looks {
            let aggregates = ExperimentFactory.conversions(
                control: (look.units, look.control),
                treatment: (look.units, look.treatment)
            )
            history.recordLook(aggregates, configuration: AnalysisConfiguration())
            let results = try ExperimentAnalysis.analyze(aggregates, history: history)
            let comparison = try #require(
                results.results(metric: "purchase", measure: .conversionRate)?.comparisons.first
            )
            latest.append(comparison.latestLook.pValue)
            let running = comparison.alwaysValid
            #expect(running.pValue <= comparison.latestLook.pValue)
            #expect(running == history.sequence(metric: "purchase", measure: .conversionRate, variant: "treatment"))
            if let previous {
                #expect(running.pValue <= previous.pValue, "look \(look)")
                #expect(previous.absoluteInterval.contains(running.absoluteInterval.lower))
                #expect(previous.absoluteInterval.contains(running.absoluteInterval.upper))
                let before = try #require(previous.relativeInterval)
                let now = try #require(running.relativeInterval)
                #expect(before.contains(now.lower) && before.contains(now.upper))
            }
            previous = running
        }
        // The data did what the test is about: the look's p-value fell below 0.05, then rose above it.
        let lowest = try #require(latest.indices.min { latest[$0] < latest[$1] })
        #expect(latest[lowest] < 0.05 && lowest > 0 && lowest < latest.count - 1, "\(latest)")
        #expect(try #require(latest.last) > 0.3, "\(latest)")
        // The reported reading stays significant with the earlier minimum, and its intervals agree.
        let final = try #require(previous)
        #expect(final.pValue == latest[lowest])
        #expect(!final.absoluteInterval.contains(0))
        #expect(final.relativeInterval?.contains(0) == false)
    }

    @Test func theSameLookTwiceChangesNothing() throws {
        let aggregates = ExperimentFactory.conversions(control: (2_000, 200), treatment: (2_000, 290))
        var once = AlwaysValidHistory()
        once.recordLook(aggregates, configuration: AnalysisConfiguration())
        var twice = once
        twice.recordLook(aggregates, configuration: AnalysisConfiguration())
        #expect(once == twice)
        // Reading results is no new look either: the stored reading and this look agree.
        let read = try ExperimentAnalysis.analyze(aggregates, history: once)
        let comparison = try #require(read.results(metric: "purchase", measure: .conversionRate)?.comparisons.first)
        #expect(
            comparison.alwaysValid == once.sequence(metric: "purchase", measure: .conversionRate, variant: "treatment")
        )
    }

    @Test func looksWithoutVarianceDoNotCount() throws {
        // One unit each: treatment 0 of 1, control 1 of 1. The look alone claims p = 0 (variance
        // 0); kept as a running minimum it would stay "significant" forever.
        let tiny = ExperimentFactory.conversions(control: (1, 1), treatment: (1, 0))
        var history = AlwaysValidHistory()
        history.recordLook(tiny, configuration: AnalysisConfiguration())
        #expect(history.entries.isEmpty)
        let results = try ExperimentAnalysis.analyze(tiny, history: history)
        let comparison = try #require(results.results(metric: "purchase", measure: .conversionRate)?.comparisons.first)
        #expect(comparison.latestLook.pValue == 0)
        #expect(!comparison.latestLook.isInformative)
        #expect(comparison.alwaysValid == .beforeAnyLook)
    }

    /// Before this change the relative interval came from the delta method with its own mixture,
    /// so it could exclude 0 while the p-value was above α (and the reverse).
    @Test(arguments: [0.8, 0.9, 0.95, 0.99])
    func relativeIntervalExcludesZeroExactlyWhenThePValueIsBelowAlpha(level: Double) throws {
        let configuration = AnalysisConfiguration(confidenceLevel: level)
        var checked = 0
        for units in stride(from: 200, through: 20_000, by: 450) {
            for extra in [0, 5, 11, 17, 23, 31, 40, 52] {
                let control = units / 10
                let treatment = control + extra * units / 2_000
                let results = try ExperimentAnalysis.analyze(
                    ExperimentFactory.conversions(control: (units, control), treatment: (units, treatment)),
                    configuration: configuration
                )
                for measure in results.measures {
                    for comparison in measure.comparisons {
                        let look = comparison.latestLook
                        let relative = try #require(look.relativeInterval)
                        // Away from the boundary, where rounding could tip either side.
                        guard abs(look.pValue - (1 - level)) > 1e-9 else { continue }
                        #expect(
                            relative.contains(0) == (look.pValue >= 1 - level),
                            "\(units) \(extra) \(measure.measure)"
                        )
                        #expect(look.absoluteInterval.contains(0) == (look.pValue >= 1 - level))
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 300)
    }

    @Test func relativeIntervalIsUnboundedWhileControlIsNotClearOfZero() throws {
        // Control 1 of 40: its rate is not clearly above 0 at the always-valid level.
        let results = try ExperimentAnalysis.analyze(
            ExperimentFactory.conversions(control: (40, 1), treatment: (40, 6))
        )
        let look = try #require(
            results.results(metric: "purchase", measure: .conversionRate)?.comparisons.first?.latestLook
        )
        #expect(look.relativeInterval == .unbounded)
    }
}
