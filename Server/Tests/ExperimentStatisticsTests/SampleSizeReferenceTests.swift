import ExperimentStatistics
import Foundation
import Testing

/// ``SampleSizeEstimate`` against Fixtures/sample_size_reference.json: written by
/// Fixtures/make_sample_size_fixtures.py with statsmodels' `NormalIndPower.solve_power`, which
/// solves the two-sided power function numerically (both tails) where the Swift uses the closed
/// form (one tail); the other tail moves the answers by less than 1e-5 here.
struct SampleSizeReferenceTests {
    struct Fixture: Decodable {
        struct Case: Decodable {
            let name: String
            let controlVariance: Double
            let treatmentVariance: Double
            let difference: Double
            let confidenceLevel: Double
            let power: Double
            let unitsPerVariant: Double
            let units: Double
            let minimumDetectableDifference: Double
        }

        let cases: [Case]
    }

    static func fixture() throws -> Fixture {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sample_size_reference.json")
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    @Test func unitsPerVariantAndTheSmallestDetectableDifferenceMatchStatsmodels() throws {
        let fixture = try Self.fixture()
        #expect(fixture.cases.count == 5)
        for reference in fixture.cases {
            let units = SampleSizeEstimate.unitsPerVariant(
                difference: reference.difference,
                controlVariance: reference.controlVariance,
                treatmentVariance: reference.treatmentVariance,
                confidenceLevel: reference.confidenceLevel,
                power: reference.power
            )
            expectClose(units, reference.unitsPerVariant, "\(reference.name): units per variant", relative: 1e-4)
            let smallest = SampleSizeEstimate.minimumDetectableDifference(
                unitsPerVariant: reference.units,
                controlVariance: reference.controlVariance,
                treatmentVariance: reference.treatmentVariance,
                confidenceLevel: reference.confidenceLevel,
                power: reference.power
            )
            expectClose(
                smallest,
                reference.minimumDetectableDifference,
                "\(reference.name): smallest detectable difference",
                relative: 1e-4
            )
        }
    }

    @Test func withoutADifferenceOrAVarianceThereIsNoEstimate() {
        #expect(
            SampleSizeEstimate.unitsPerVariant(
                difference: 0,
                controlVariance: 0.1,
                treatmentVariance: 0.1,
                confidenceLevel: 0.95
            ) == nil
        )
        #expect(
            SampleSizeEstimate.unitsPerVariant(
                difference: 0.01,
                controlVariance: 0,
                treatmentVariance: 0,
                confidenceLevel: 0.95
            ) == nil
        )
        #expect(
            SampleSizeEstimate.minimumDetectableDifference(
                unitsPerVariant: 0,
                controlVariance: 0.1,
                treatmentVariance: 0.1,
                confidenceLevel: 0.95
            ) == nil
        )
    }
}
