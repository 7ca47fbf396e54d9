import Foundation
import Testing
import Vane
import VaneTesting

/// Declared by the app; the flags file names it as the `swiftType` of `settings_layout`.
struct SettingsLayout: Codable, Sendable, Equatable {
    var sections: [String]
    var showBadges: Bool
}

/// The code VaneFlagsPlugin generated from this target's vane-flags.json at build time: that this
/// file compiles is the first test; these check what it does.
@Suite struct GeneratedFlagsTests {
    @Test func propertiesReadTypedValuesWithTheFileDefaults() {
        let config = InMemoryConfig(
            defaults: Dictionary(
                uniqueKeysWithValues: Flags.defaults.entries.map {
                    ($0.key, $0.value.stringValue)
                }
            )
        )
        let flags = Flags(config)
        #expect(flags.newCheckout == false)
        #expect(flags.maxItems == 20)
        #expect(flags.discount == 1.0)
        #expect(flags.banner == "Hello")
        #expect(flags.settingsLayout == SettingsLayout(sections: ["account"], showBadges: false))
        #expect(flags.rawLayout == "[1,2]")
        #expect(flags.onboardingFlow == .control)
        #expect(flags.`default` == true)
        #expect(flags._3dTouch == false)
        #expect(flags.uiDarkMode == "auto")

        config.set("true", forKey: "new_checkout")
        config.set("one_page", forKey: "onboarding_flow")
        config.set("video-tour", forKey: "onboarding_flow")
        #expect(flags.newCheckout)
        #expect(flags.onboardingFlow == .videoTour)
        config.set("carousel", forKey: "onboarding_flow")
        #expect(flags.onboardingFlow == .control, "an unknown variant falls back to the default")
        #expect(config.wasRead(forKey: .newCheckout))
    }

    @Test func keysEnumAndVariantsMatchTheFile() {
        #expect(FlagsKey.allCases.count == 10)
        #expect(FlagsKey.newCheckout.rawValue == "new_checkout")
        #expect(FlagsKey.uiDarkMode.rawValue == "ui.dark-mode")
        #expect(OnboardingFlowVariant.allCases.map(\.rawValue) == ["control", "one_page", "video-tour"])
        #expect(RemoteKeys.newCheckout.descriptor.realtime)
        #expect(
            RemoteKeys.newCheckout.descriptor.description == "The redesigned checkout.\nShown to \"beta\" users first."
        )
    }

    @Test func theCatalogFeedsTheDebugMenu() {
        #expect(Flags.catalog.map(\.name) == FlagsKey.allCases.map(\.rawValue))
        let client = VaneClient(
            configuration: VaneClient.Configuration(
                serverURL: URL(fileURLWithPath: "/"),
                project: "app",
                environment: "test",
                clientKey: "unused",
                context: ClientContext(),
                defaults: Flags.defaults,
                keys: Flags.catalog,
                storage: .inMemory
            )
        )
        let menu = client.debugMenu()
        let checkout = menu.item(forKey: "new_checkout")
        #expect(checkout?.title == "New checkout")
        #expect(checkout?.kind == .bool)
        #expect(menu.sections.map(\.title).contains("Checkout"))
        #expect(menu.item(forKey: "onboarding_flow")?.allowedValues == ["control", "one_page", "video-tour"])
        #expect(menu.item(forKey: "settings_layout")?.kind == .json)
        #expect(Flags(client).maxItems == 20, "the bundled defaults apply")
    }
}
