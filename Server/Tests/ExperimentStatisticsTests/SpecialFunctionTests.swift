import ExperimentStatistics
import TestSupport
import Testing

/// The special functions against scipy on a grid, to 1e-10 relative.
@Suite struct SpecialFunctionTests {
    let reference = try? ReferenceFixtures.load().specialFunctions

    @Test func normalDistribution() throws {
        let reference = try #require(reference)
        for row in reference.normalCDF {
            // scipy flushes Φ(−38) ≈ 2.9e-316, a subnormal, to 0.
            expectClose(NormalDistribution.cdf(row[0]), row[1], "Φ(\(row[0]))", relative: 1e-10, absolute: 1e-300)
        }
        for row in reference.normalSurvival {
            expectClose(
                NormalDistribution.survival(row[0]),
                row[1],
                "1 − Φ(\(row[0]))",
                relative: 1e-10,
                absolute: 1e-300
            )
        }
        for row in reference.normalQuantile {
            expectClose(NormalDistribution.quantile(row[0]), row[1], "Φ⁻¹(\(row[0]))", relative: 1e-10, absolute: 1e-14)
        }
    }

    @Test func incompleteGamma() throws {
        let reference = try #require(reference)
        for row in reference.regularizedLowerGamma {
            expectClose(
                IncompleteGamma.regularizedLower(row[0], row[1]),
                row[2],
                "P(\(row[0]), \(row[1]))",
                relative: 1e-10,
                absolute: 1e-300
            )
        }
        for row in reference.regularizedUpperGamma {
            expectClose(
                IncompleteGamma.regularizedUpper(row[0], row[1]),
                row[2],
                "Q(\(row[0]), \(row[1]))",
                relative: 1e-10,
                absolute: 1e-300
            )
        }
        for row in reference.chiSquareSurvival {
            expectClose(
                IncompleteGamma.chiSquareSurvival(row[1], degreesOfFreedom: row[0]),
                row[2],
                "χ²(\(row[0])) survival at \(row[1])",
                relative: 1e-10,
                absolute: 1e-300
            )
        }
    }

    @Test func incompleteBeta() throws {
        let reference = try #require(reference)
        for row in reference.regularizedBeta {
            expectClose(
                IncompleteBeta.regularized(row[0], row[1], row[2]),
                row[3],
                "I_\(row[0])(\(row[1]), \(row[2]))",
                relative: 1e-10,
                absolute: 1e-300
            )
        }
    }

    @Test func outOfDomainIsNaNNotACrash() {
        #expect(NormalDistribution.quantile(-0.1).isNaN)
        #expect(NormalDistribution.quantile(0) == -.infinity)
        #expect(NormalDistribution.quantile(1) == .infinity)
        #expect(NormalDistribution.cdf(.nan).isNaN)
        #expect(IncompleteGamma.regularizedLower(-1, 2).isNaN)
        #expect(IncompleteGamma.regularizedUpper(2, .infinity) == 0)
        #expect(IncompleteGamma.chiSquareSurvival(.nan, degreesOfFreedom: 1).isNaN)
        #expect(IncompleteBeta.regularized(1.5, 2, 2).isNaN)
        #expect(IncompleteBeta.regularized(0.5, .infinity, 2).isNaN)
        #expect(IncompleteBeta.regularized(0.5, 0, 2).isNaN)
    }
}

/// The building blocks never crash on parameters outside their domain.
@Suite struct BuildingBlockDomainTests {
    @Test func betaBinomialOutsideItsDomainIsNaN() {
        let fine = BetaDistribution(alpha: 3, beta: 9)
        for bad in [
            BetaDistribution(alpha: 0.5, beta: 2), BetaDistribution(alpha: .nan, beta: 2),
            BetaDistribution(alpha: 2, beta: .infinity),
        ] {
            #expect(!bad.isSupported)
            #expect(BetaBinomialIntegrals.probabilityGreater(bad, than: fine).isNaN)
            #expect(BetaBinomialIntegrals.expectedShortfall(of: fine, below: bad).isNaN)
        }
    }

    @Test func betaBinomialOfIdenticalPosteriorsIsEven() {
        let posterior = BetaDistribution(alpha: 101, beta: 901)
        let comparison = BayesianComparison.betaBinomial(control: posterior, treatment: posterior)
        #expect(abs(comparison.chanceToBeatControl - 0.5) < 1e-12)
        #expect(abs(comparison.expectedLossOfControl - comparison.expectedLossOfTreatment) < 1e-15)
    }

    @Test func sampleRatioMismatchOfOneVariantOrNoUnits() {
        let one = SampleRatioMismatch(
            variants: [VariantAggregates(name: "a", splitWeight: 1, exposedUnits: 9)],
            threshold: 0.001
        )
        #expect(one.pValue == 1 && !one.isMismatch)
        let none = SampleRatioMismatch(
            variants: [
                VariantAggregates(name: "a", splitWeight: 1, exposedUnits: 0),
                VariantAggregates(name: "b", splitWeight: 1, exposedUnits: 0),
            ],
            threshold: 0.001
        )
        #expect(none.pValue == 1 && none.chiSquare == 0)
    }
}
