import Vane

// Each key is declared once, with its type and default. (`vane generate` writes this file from a
// flags file; see docs/SDK.md.)

/// The settings page's layout, sent as JSON.
struct SettingsLayout: Codable, Sendable, Equatable {
    var sections: [String]
    var showBadges: Bool
}

/// The checkout A/B test's variants.
enum CheckoutVariant: String, CaseIterable, Sendable {
    case control
    case onePage = "one_page"
}

extension ConfigKeys {
    /// Kill switch for every payment screen.
    static let paymentsEnabled = FeatureFlag(
        "payments_enabled",
        default: true,
        title: "Payments",
        category: "Safety",
        realtime: true
    )
    /// The home screen's banner.
    static let bannerText = ConfigKey("banner_text", default: "Welcome!")
    /// The settings page's sections.
    static let settingsLayout = ConfigKey(
        json: "settings_layout",
        default: SettingsLayout(sections: ["account"], showBadges: false)
    )
    /// The checkout experiment.
    static let checkoutVariant = ConfigKey(
        experiment: "checkout_variant",
        default: CheckoutVariant.control,
        title: "Checkout experiment"
    )
}
