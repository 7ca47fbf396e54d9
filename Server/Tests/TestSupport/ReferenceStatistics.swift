/// The statistics scipy and statsmodels computed for a simulated experiment, as the fixture scripts
/// under `Tests/ExperimentStatisticsTests/Fixtures` write them: read by the statistics engine's
/// tests (on aggregates) and by the server's population tests (through the API).
package enum ReferenceStatistics {
    package struct SampleRatio: Decodable, Sendable {
        package let chiSquare: Double
        package let pValue: Double
        package let isMismatch: Bool
    }

    package struct VariantValues: Decodable, Sendable {
        package let variant: String
        package let value: Double
        package let variance: Double
        package let unitVariance: Double
        /// The variant's own interval: Wilson (rates), normal (means, ratios).
        package let intervalLower: Double
        package let intervalUpper: Double
    }

    package struct ComparisonValues: Decodable, Sendable {
        package let variant: String
        package let difference: Double
        package let differenceVariance: Double
        package let relativeDifference: Double
        package let relativeVariance: Double
        package let zScore: Double
        package let pValue: Double
        package let intervalLower: Double
        package let intervalUpper: Double
        package let relativeIntervalLower: Double
        package let relativeIntervalUpper: Double
        package let alwaysValidPValue: Double
        package let sequenceLower: Double
        package let sequenceUpper: Double
        /// nil where the relative confidence sequence is unbounded.
        package let relativeSequenceLower: Double?
        package let relativeSequenceUpper: Double?
        package let chanceToBeatControl: Double
        package let expectedLossOfTreatment: Double
        package let expectedLossOfControl: Double
    }

    /// One measure of one metric: every variant's estimate and every treatment against control.
    package struct MeasureValues: Decodable, Sendable {
        package let metric: String
        package let measure: String
        package let variants: [VariantValues]
        package let comparisons: [ComparisonValues]
    }
}
