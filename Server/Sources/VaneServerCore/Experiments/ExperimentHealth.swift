package import ExperimentStatistics

/// The health checks of an experiment's data, to read before any figure: does the split of the
/// exposed units fit the configured weights, was any unit exposed to several variants, did
/// apps expose a version no one fetched. The results (``ExperimentReport``) show them above the
/// numbers; the rollout guard holds a step while one of them warns (``RolloutAssessment``).
package struct ExperimentHealth: Sendable {
    /// Nil before any exposure.
    package let sampleRatioMismatch: SampleRatioMismatch?
    package let unitsInSeveralVariants: Int
    package let exposuresWithoutFetch: Int

    /// - Parameter threshold: The p-value below which the split counts as a mismatch.
    package init(aggregates: ExperimentAggregates, tally: ExperimentTally, threshold: Double) {
        self.init(
            aggregates: aggregates,
            unitsInSeveralVariants: tally.unitsInSeveralVariants,
            exposuresWithoutFetch: tally.exposuresWithoutFetch ?? 0,
            threshold: threshold
        )
    }

    package init(
        aggregates: ExperimentAggregates,
        unitsInSeveralVariants: Int = 0,
        exposuresWithoutFetch: Int = 0,
        threshold: Double
    ) {
        // Computed even before control has units: exposures to every variant but control are
        // exactly the mismatch to report early.
        let exposed = aggregates.variants.contains { $0.exposedUnits > 0 }
        sampleRatioMismatch = exposed ? SampleRatioMismatch(variants: aggregates.variants, threshold: threshold) : nil
        self.unitsInSeveralVariants = unitsInSeveralVariants
        self.exposuresWithoutFetch = exposuresWithoutFetch
    }

    /// Sentences to show above the numbers, the sample-ratio mismatch first; empty when every
    /// check passes.
    package var warnings: [String] {
        var warnings: [String] = []
        if let mismatch = sampleRatioMismatch, mismatch.isMismatch {
            let observed = mismatch.variants.map { "\($0.variant) \($0.observedUnits)" }.joined(separator: ", ")
            warnings.append(
                "sample-ratio mismatch: the exposed units (\(observed)) do not fit the configured split "
                    + "(p \(ExperimentReport.pValueText(mismatch.pValue)), below \(mismatch.threshold)); find the "
                    + "cause before trusting any difference below"
            )
        }
        return warnings + assignmentWarnings
    }

    /// The warnings about how units were assigned and exposed (every one but the sample-ratio
    /// mismatch): counts that never fall while the experiment runs.
    package var assignmentWarnings: [String] {
        var warnings: [String] = []
        if unitsInSeveralVariants > 0 {
            warnings.append(
                "\(unitsInSeveralVariants) unit(s) were exposed to more than one variant and are left out of "
                    + "the results; check that the variants' conditions do not overlap and that the randomization "
                    + "id does not change"
            )
        }
        if exposuresWithoutFetch > 0 {
            warnings.append(
                "\(exposuresWithoutFetch) exposure(s) name a template version no app fetched from this server; "
                    + "check that every app sending events fetches its config from this server and environment"
            )
        }
        return warnings
    }
}
