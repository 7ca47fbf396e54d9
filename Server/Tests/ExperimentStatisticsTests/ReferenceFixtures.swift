import ExperimentStatistics
import Foundation
import TestSupport
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

    typealias SampleRatio = ReferenceStatistics.SampleRatio
    typealias VariantValues = ReferenceStatistics.VariantValues
    typealias ComparisonValues = ReferenceStatistics.ComparisonValues
    typealias MeasureValues = ReferenceStatistics.MeasureValues

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
