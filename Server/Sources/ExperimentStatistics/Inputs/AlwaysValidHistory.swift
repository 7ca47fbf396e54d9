/// What an experiment keeps between looks: per metric, measure and treatment, the running
/// always-valid reading (``AlwaysValidSequence``). The server updates it whenever events change
/// the experiment's sums (``recordLook(_:configuration:)``) — a look nobody made still counts —
/// and passes it to ``ExperimentAnalysis/analyze(_:configuration:history:)``.
///
/// It belongs to the experiment: nothing resets it while the experiment runs, and the
/// configuration it was kept under (the confidence level, the mixture) must stay the same.
public struct AlwaysValidHistory: Sendable, Hashable, Codable {
    /// One comparison's running reading.
    public struct Entry: Sendable, Hashable, Codable {
        /// The metric's name.
        public var metric: String
        /// Which measure of the metric.
        public var measure: Measure
        /// The treatment compared with control.
        public var variant: String
        /// The reading over every look so far.
        public var sequence: AlwaysValidSequence

        /// An entry as kept.
        public init(metric: String, measure: Measure, variant: String, sequence: AlwaysValidSequence) {
            self.metric = metric
            self.measure = measure
            self.variant = variant
            self.sequence = sequence
        }
    }

    /// Every comparison with at least one informative look, in the order first seen.
    public private(set) var entries: [Entry]

    /// A history as kept; empty before the first look.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// The running reading of one comparison; `nil` before its first informative look.
    public func sequence(metric: String, measure: Measure, variant: String) -> AlwaysValidSequence? {
        entries.first { $0.metric == metric && $0.measure == measure && $0.variant == variant }?.sequence
    }

    /// Takes a look at `aggregates`: every comparison's always-valid test at this look joins its
    /// running reading. Costs a few arithmetic operations per variant and measure (no Bayesian
    /// integrals). Aggregates that cannot be analysed (no unit in control yet) are no look.
    public mutating func recordLook(_ aggregates: ExperimentAggregates, configuration: AnalysisConfiguration) {
        guard (try? AggregatesValidation.validate(configuration)) != nil,
            let control = try? AggregatesValidation.validate(aggregates)
        else { return }
        let analysis = MeasureAnalysis(variants: aggregates.variants, control: control, configuration: configuration)
        var index: [String: Int] = [:]
        for (position, entry) in entries.enumerated() {
            index[Self.key(entry.metric, entry.measure, entry.variant)] = position
        }
        for (metric, measure) in analysis.measures() {
            for (variant, look) in analysis.alwaysValidLooks(metric: metric, measure: measure) where look.isInformative
            {
                let key = Self.key(metric, measure, variant)
                if let position = index[key] {
                    entries[position].sequence = entries[position].sequence.adding(look)
                } else {
                    index[key] = entries.count
                    entries.append(
                        Entry(
                            metric: metric,
                            measure: measure,
                            variant: variant,
                            sequence: AlwaysValidSequence.beforeAnyLook.adding(look)
                        )
                    )
                }
            }
        }
    }

    private static func key(_ metric: String, _ measure: Measure, _ variant: String) -> String {
        "\(metric)\u{0}\(measure.rawValue)\u{0}\(variant)"
    }
}
