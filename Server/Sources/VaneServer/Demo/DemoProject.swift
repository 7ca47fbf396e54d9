import VaneCore
import VaneServerCore

/// The `demo` project a first start creates, so there is something to fetch at once.
enum DemoProject {
    static let projectId = "demo"
    static let environments = ["production", "staging"]

    /// A kill switch, a banner string, a JSON settings layout, a percent A/B test and a
    /// country-targeted value.
    static let template = ConfigTemplate(
        conditions: [
            TemplateCondition(
                name: "germany_austria",
                expression: "device.country in ['de', 'at']",
                tagColor: "ORANGE"
            ),
            TemplateCondition(name: "new_app_versions", expression: "app.version.>=(['2.0.0'])", tagColor: "GREEN"),
            TemplateCondition(
                name: "checkout_test_b",
                expression: "percent('checkout_test') between 50 and 100",
                tagColor: "PURPLE"
            ),
        ],
        parameters: [
            TemplateParameter(
                key: "payments_enabled",
                defaultValue: .value("true"),
                description: "Kill switch: turn off to hide every payment screen at once.",
                valueType: .boolean,
                metadata: ParameterMetadata(
                    title: "Payments",
                    category: "Safety",
                    allowedValues: ["true", "false"],
                    realtime: true
                )
            ),
            TemplateParameter(
                key: "banner_text",
                defaultValue: .value("Welcome to Vane!"),
                conditionalValues: [
                    ConditionalValue(conditionName: "germany_austria", value: .value("Willkommen bei Vane!"))
                ],
                description: "The banner at the top of the home screen.",
                valueType: .string,
                metadata: ParameterMetadata(title: "Home banner", category: "Home")
            ),
            TemplateParameter(
                key: "settings_layout",
                defaultValue: .value(#"{"sections":["account","notifications","privacy"],"showBadges":false}"#),
                conditionalValues: [
                    ConditionalValue(
                        conditionName: "new_app_versions",
                        value: .value(#"{"sections":["account","notifications","privacy","labs"],"showBadges":true}"#)
                    )
                ],
                description: "The order of the settings page's sections.",
                valueType: .json,
                metadata: ParameterMetadata(title: "Settings layout", category: "Settings")
            ),
            TemplateParameter(
                key: "checkout_variant",
                defaultValue: .value("control"),
                conditionalValues: [ConditionalValue(conditionName: "checkout_test_b", value: .value("one_page"))],
                description: "A/B test: half of the users get the one-page checkout.",
                valueType: .string,
                metadata: ParameterMetadata(
                    title: "Checkout experiment",
                    category: "Checkout",
                    allowedValues: ["control", "one_page"]
                )
            ),
        ],
        version: TemplateVersion(description: "Demo flags created on first start")
    )
}
