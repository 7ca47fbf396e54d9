import Foundation
import Testing
import Vane
import VaneCore
import VaneTesting

// The DocC articles' snippets, compiled and run: an API rename that leaves an article behind
// fails here. Each declaration and test is copied from the article named above it; SwiftUI
// snippets (the debug screen, ObservableConfig in a view) need Apple platforms and are not here.

// Sources/Vane/Documentation.docc/GettingStarted.md, "Declare the keys".
enum CheckoutVariant: String, CaseIterable, Sendable {
    case control
    case onePage = "one_page"
}

extension RemoteKeys {
    static let paymentsEnabled = FeatureFlag("payments_enabled", default: true)
    static let maxItems = RemoteKey("max_items", default: 20)
    static let banner = RemoteKey("banner_text", default: "Welcome!")
    static let checkout = RemoteKey(experiment: "checkout_variant", default: CheckoutVariant.control)
}

// Sources/VaneTesting/Documentation.docc/TestingWithVaneTesting.md, "Overview".
struct CheckoutModel {
    let config: any RemoteConfigReader
    let tracker: any EventTracker

    var showsPayments: Bool { config[.paymentsEnabled] }
    var maxItems: Int { config[.maxItems] }

    func complete(total: Double) {
        tracker.track("checkout_completed", value: total, properties: ["currency": "EUR"])
    }
}

// GettingStarted.md, "Read values": a view model reading through RemoteConfigSystem.
final class CartViewModel {
    @RemoteValue(.maxItems) var maxItems
}

@Suite struct ArticleSnippetTests {
    // VaneTesting.md, "Overview".
    @Test func hidesPaymentsWhenTheKillSwitchIsOff() {
        let config = InMemoryConfig()
        config.set(false, forKey: .paymentsEnabled)
        let model = CheckoutModel(config: config, tracker: config)
        #expect(model.showsPayments == false)
        #expect(config.wasRead(forKey: .paymentsEnabled))
    }

    // TestingWithVaneTesting.md, "Set values": each way of setting a value reads back as written.
    @Test func setValues() {
        let config = InMemoryConfig(["max_items": "50"])
        config.set(true, forKey: .paymentsEnabled)
        config.set("3", forKey: "retries")
        config.setDefault("Welcome!", forKey: "banner_text")
        config.setOverride(false, forKey: .paymentsEnabled)
        #expect(config[.maxItems] == 50)
        #expect(config.int(forKey: "retries", default: 0) == 3)
        #expect(config[.banner] == "Welcome!")
        #expect(config[.paymentsEnabled] == false, "the override wins")
        #expect(config.value(forKey: "payments_enabled")?.source == .override)
    }

    // TestingWithVaneTesting.md, "Assert what was read".
    @Test func fallsBackWhenMaxItemsIsNotANumber() {
        let config = InMemoryConfig(["max_items": "many"])
        let model = CheckoutModel(config: config, tracker: config)
        #expect(model.maxItems == 20)
        #expect(config.typeMismatches.map(\.key) == ["max_items"])
    }

    // TestingWithVaneTesting.md, "Experiments and events".
    @Test func checkoutTracksItsCompletion() {
        let config = InMemoryConfig(["checkout_variant": "one_page"])
        config.setExperiment("checkout-button", variant: "one-page", forKey: "checkout_variant")
        let model = CheckoutModel(config: config, tracker: config)
        _ = config.string(forKey: "checkout_variant", default: "control")
        model.complete(total: 39.90)
        #expect(config.exposures.map(\.variant) == ["one-page"])
        #expect(config.trackedEvents.map(\.name) == ["checkout_completed"])
    }

    // GettingStarted.md, "Read values", and TypedKeysAndTheBuildPlugin.md: reads by declared key,
    // by name, and the experiment's enum; ExperimentsAndTracking.md's switch.
    @Test func readsByKeyAndByName() {
        let config = InMemoryConfig(["checkout_variant": "one_page", "banner_text": "Hello"])
        #expect(config[.paymentsEnabled])
        #expect(config.value(forKey: .maxItems) == 20)
        #expect(config.string(forKey: "banner_text", default: "Hi") == "Hello")
        #expect(config.bool(forKey: "payments_enabled", default: true))
        switch config[.checkout] {
        case .control: Issue.record("the remote variant is one_page")
        case .onePage: break
        }
        RemoteConfigSystem.bootstrap(config)
        #expect(CartViewModel().maxItems == 20)
    }

    // OverridesAndDebugScreen.md, "Overview", against a real client with in-memory storage.
    @Test func overridesOnTheClient() {
        let client = VaneClient(
            configuration: VaneClient.Configuration(
                serverURL: URL(fileURLWithPath: "/"),
                project: "shop",
                environment: "production",
                clientKey: "vane_client_docs",
                storage: .inMemory
            )
        )
        client.setOverride(false, forKey: .paymentsEnabled)
        client.setOverride("one_page", forKey: "checkout_variant")
        #expect(client[.paymentsEnabled] == false)
        #expect(client[.checkout] == .onePage)
        client.removeOverride(forKey: "checkout_variant")
        #expect(client[.checkout] == .control)
        client.removeAllOverrides()
        #expect(client.overrides.isEmpty)
    }

    // Sources/VaneCore/Documentation.docc/VaneCore.md, "Overview".
    @Test func evaluatesATemplate() throws {
        let templateData = Data(
            #"""
            {"conditions": [{"name": "new", "expression": "app.version.>=(['2.4.0'])"}],
             "parameters": {"new_checkout": {"defaultValue": {"value": "false"},
                                             "conditionalValues": {"new": {"value": "true"}}}}}
            """#.utf8
        )
        let template = try ConfigTemplate(data: templateData)
        let compiled = try CompiledTemplate(template)
        let context = EvaluationContext(randomizationId: "user-42", attributes: ["app.version": "2.4.1"])
        let result = compiled.evaluate(context)
        #expect(result.bool(forKey: "new_checkout", default: false))
    }
}
