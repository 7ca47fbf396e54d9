/// The settings page's layout, sent as JSON; vane-flags.json names it as `settings_layout`'s `swiftType`.
struct SettingsLayout: Codable, Sendable, Equatable {
    var sections: [String]
    var showBadges: Bool
}
