import ExperimentStatistics
import Foundation
import Testing

/// Fixtures/reference.json, written by Fixtures/make_fixtures.py from scipy and statsmodels.
struct ReferenceFixtures: Decodable, Sendable {
    struct SpecialFunctions: Decodable, Sendable {
        let normalCDF: [[Double]]
        let normalSurvival: [[Double]]
        let normalQuantile: [[Double]]
        let regularizedLowerGamma: [[Double]]
        let regularizedUpperGamma: [[Double]]
        let chiSquareSurvival: [[Double]]
        let regularizedBeta: [[Double]]
    }

    struct Configuration: Decodable, Sendable {
        let confidenceLevel: Double
        let mixtureRelativeStandardDeviation: Double?
        let mixtureAbsoluteVariance: Double?
        let priorAlpha: Double
        let priorBeta: Double

        var analysisConfiguration: AnalysisConfiguration {
            let mixture: MixtureVariance =
                if let variance = mixtureAbsoluteVariance {
                    .absolute(variance: variance)
                } else {
                    .relativeToControl(standardDeviation: mixtureRelativeStandardDeviation ?? 0.1)
                }
            return AnalysisConfiguration(
                confidenceLevel: confidenceLevel,
                mixtureVariance: mixture,
                conversionPriorAlpha: priorAlpha,
                conversionPriorBeta: priorBeta
            )
        }
    }

    struct SampleRatio: Decodable, Sendable {
        let chiSquare: Double
        let pValue: Double
        let isMismatch: Bool
    }

    struct VariantValues: Decodable, Sendable {
        let variant: String
        let value: Double
        let variance: Double
        let unitVariance: Double
    }

    struct ComparisonValues: Decodable, Sendable {
        let variant: String
        let difference: Double
        let differenceVariance: Double
        let relativeDifference: Double
        let relativeVariance: Double
        let zScore: Double
        let pValue: Double
        let intervalLower: Double
        let intervalUpper: Double
        let relativeIntervalLower: Double
        let relativeIntervalUpper: Double
        let alwaysValidPValue: Double
        let sequenceLower: Double
        let sequenceUpper: Double
        let relativeSequenceLower: Double
        let relativeSequenceUpper: Double
        let chanceToBeatControl: Double
        let expectedLossOfTreatment: Double
        let expectedLossOfControl: Double
    }

    struct MeasureValues: Decodable, Sendable {
        let metric: String
        let measure: String
        let variants: [VariantValues]
        let comparisons: [ComparisonValues]
    }

    struct Expected: Decodable, Sendable {
        let sampleRatioMismatch: SampleRatio
        let measures: [MeasureValues]
    }

    struct Scenario: Decodable, Sendable, CustomTestStringConvertible {
        let name: String
        let description: String
        let configuration: Configuration
        let aggregates: ExperimentAggregates
        let expected: Expected

        var testDescription: String { name }
    }

    let command: String
    let specialFunctions: SpecialFunctions
    let scenarios: [Scenario]

    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/reference.json")

    static func load() throws -> ReferenceFixtures {
        try JSONDecoder().decode(ReferenceFixtures.self, from: Data(contentsOf: url))
    }

    /// The scenarios, for parameterized tests (empty if the file cannot be read, which the
    /// `fixturesLoad` test reports).
    static let scenarios: [Scenario] = (try? load().scenarios) ?? []
}
