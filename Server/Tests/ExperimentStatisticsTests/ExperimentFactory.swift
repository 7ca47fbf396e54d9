import ExperimentStatistics

/// Small aggregates for the error and property tests.
enum ExperimentFactory {
    static func variant(
        _ name: String,
        weight: Double = 1,
        units: Int,
        converted: Int = 0,
        sum: Double = 0,
        sumOfSquares: Double = 0
    ) -> VariantAggregates {
        VariantAggregates(
            name: name,
            splitWeight: weight,
            exposedUnits: units,
            metrics: [
                "purchase": MetricAggregates(convertedUnits: converted, valueSum: sum, valueSumOfSquares: sumOfSquares)
            ]
        )
    }

    /// Conversions only, value 1 per converted unit.
    static func conversions(
        control: (units: Int, converted: Int),
        treatment: (units: Int, converted: Int),
        weights: (Double, Double) = (1, 1)
    ) -> ExperimentAggregates {
        ExperimentAggregates(
            controlVariant: "control",
            variants: [
                variant(
                    "control",
                    weight: weights.0,
                    units: control.units,
                    converted: control.converted,
                    sum: Double(control.converted),
                    sumOfSquares: Double(control.converted)
                ),
                variant(
                    "treatment",
                    weight: weights.1,
                    units: treatment.units,
                    converted: treatment.converted,
                    sum: Double(treatment.converted),
                    sumOfSquares: Double(treatment.converted)
                ),
            ]
        )
    }
}
