import VaneCore

/// Builds realistic synthetic templates, the same every run.
struct TemplateGenerator {
    /// A small deterministic generator (SplitMix64), so runs compare like with like.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let countries = ["us", "gb", "de", "fr", "at", "ch", "jp", "br", "in", "ca", "au", "es", "it", "nl", "se"]
    static let languages = ["en", "de", "fr", "ja", "pt-BR", "es", "it", "nl", "sv"]

    /// A template with `parameters` keys and `conditions` conditions of every common kind.
    static func template(
        parameters parameterCount: Int,
        conditions conditionCount: Int,
        seed: UInt64 = 42
    ) -> ConfigTemplate {
        var random = SeededGenerator(state: seed)
        var conditions: [TemplateCondition] = []
        for index in 0..<conditionCount {
            let expression: String
            switch index % 8 {
            case 0: expression = "device.country in [\(pick(countries, 3, &random))]"
            case 1:
                expression =
                    "app.version.>=(['\(Int.random(in: 1...4, using: &random)).\(Int.random(in: 0...9, using: &random)).0'])"
            case 2: expression = "percent('seed_\(index)') <= \(Int.random(in: 1...99, using: &random))"
            case 3: expression = "device.os == 'ios' && device.language in [\(pick(languages, 2, &random))]"
            case 4:
                expression =
                    "app.customSignal['plan'].exactlyMatches(['pro', 'team']) && app.customSignal['seats'] >= \(index % 50)"
            case 5:
                expression =
                    "percent between \(index % 50) and \(index % 50 + 10) && device.country in [\(pick(countries, 2, &random))]"
            case 6: expression = "version(app.customSignal['sdk']) >= '1.\(index % 20).0' || app.build.>=(['\(index)'])"
            default:
                expression =
                    "app.userProperty['level'] > \(index % 100) && dateTime >= dateTime('2024-01-01T00:00:00', 'UTC')"
            }
            conditions.append(TemplateCondition(name: "condition_\(index)", expression: expression))
        }
        var parameters: [TemplateParameter] = []
        for index in 0..<parameterCount {
            let valueCount = conditionCount == 0 ? 0 : Int.random(in: 0...3, using: &random)
            let conditionals = (0..<valueCount).map { _ in
                ConditionalValue(
                    conditionName: "condition_\(Int.random(in: 0..<conditionCount, using: &random))",
                    value: .value("variant_\(Int.random(in: 0..<5, using: &random))")
                )
            }
            let unique = Dictionary(
                conditionals.map { ($0.conditionName, $0) },
                uniquingKeysWith: { first, _ in first }
            )
            parameters.append(
                TemplateParameter(
                    key: "parameter_\(index)",
                    defaultValue: index % 3 == 0 ? .value("true") : .value("default_\(index)"),
                    conditionalValues: Array(unique.values).sorted { $0.conditionName < $1.conditionName },
                    valueType: index % 3 == 0 ? .boolean : .string
                )
            )
        }
        return ConfigTemplate(conditions: conditions, parameters: parameters)
    }

    static func pick(_ values: [String], _ count: Int, _ random: inout SeededGenerator) -> String {
        (0..<count).map { _ in "'\(values.randomElement(using: &random) ?? values[0])'" }.joined(separator: ", ")
    }

    /// A context with the attributes the generated conditions read.
    static let context = EvaluationContext(
        randomizationId: "8f14e45f-ceea-467f-a0e6-1c4f7c1d2a3b",
        attributes: [
            "device.country": "de", "device.os": "ios", "device.language": "de-DE", "app.version": "3.2.1",
            "app.build": "812",
            "plan": "pro", "seats": 12, "sdk": "1.9.3", "level": 42,
        ]
    )
}
