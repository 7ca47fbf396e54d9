import Foundation
import TestSupport
import Testing
import Vane
import VaneTesting

enum Onboarding: String, CaseIterable, Sendable {
    case control
    case short
    case video
}

extension RemoteKeys {
    static let newCheckout = FeatureFlag(
        "new_checkout",
        default: false,
        title: "New checkout",
        description: "The redesigned checkout.",
        category: "Checkout"
    )
    static let maxItems = RemoteKey("max_items", default: 20, category: "Limits")
    static let discount = RemoteKey("discount", default: 0.1)
    static let onboarding = RemoteKey(
        experiment: "onboarding_flow",
        default: Onboarding.control,
        category: "Experiments"
    )
}

/// A client with no server: reads from bundled defaults and overrides only.
func offlineClient(
    defaults: [String: String] = [:],
    keys: [KeyDescriptor] = [],
    storage: StorageLocation = .inMemory
) -> VaneClient {
    VaneClient(
        configuration: VaneClient.Configuration(
            // Port 9 (discard): nothing answers there.
            serverURL: URL(fileURLWithPath: "/"),
            project: "demo",
            environment: "production",
            clientKey: "unused",
            context: ClientContext(),
            defaults: InAppDefaults(defaults),
            keys: keys,
            storage: storage
        )
    )
}

/// Typed reads, overrides, mismatches, the debug menu and the test double, without a server.
@Suite(.timeLimit(.minutes(5))) struct SDKReadingTests {
    @Test func overridesWinOverDefaultsAndCallerDefaultsComeLast() {
        let client = offlineClient(defaults: ["max_items": "50", "new_checkout": "yes"])
        #expect(client[.maxItems] == 50)
        #expect(client[.newCheckout] == true, "one coercion rule: yes is true")
        #expect(client[.discount] == 0.1)
        #expect(client.value(forKey: "discount") == nil)
        client.setOverride(80, forKey: .maxItems)
        #expect(client[.maxItems] == 80)
        #expect(client.value(forKey: "max_items")?.source == .override)
        client.removeOverride(forKey: "max_items")
        #expect(client[.maxItems] == 50)
        #expect(client.value(forKey: "max_items")?.source == .default)
    }

    @Test func aTypeMismatchReturnsTheCallersDefaultAndIsReportedOnce() async {
        let client = offlineClient(defaults: ["max_items": "1.5", "onboarding_flow": "carousel"])
        var mismatches = client.typeMismatches.makeAsyncIterator()
        #expect(client[.maxItems] == 20, "1.5 is not an Int")
        #expect(client[.maxItems] == 20)
        #expect(client.int(forKey: "max_items", default: 3) == 3)
        #expect(client.double(forKey: "max_items", default: 3) == 1.5)
        #expect(client[.onboarding] == .control, "an unknown variant falls back to the default variant")
        let first = await mismatches.next()
        #expect(first?.key == "max_items")
        #expect(first?.expectedType == "Int")
        #expect(first?.source == .default)
        #expect(first?.description.contains("caller's default was used") == true)
        let second = await mismatches.next()
        #expect(second?.key == "onboarding_flow")
        #expect(second?.expectedType == "Onboarding")
    }

    @Test func overrideChangesAreBroadcastWithTheChangedKeys() async {
        let client = offlineClient(defaults: ["max_items": "50"])
        var updates = client.updates.makeAsyncIterator()
        client.setOverride(true, forKey: .newCheckout)
        client.setOverride("50", forKey: "max_items")
        client.removeAllOverrides()
        let first = await updates.next()
        #expect(first?.reason == .override)
        #expect(first?.changedKeys == ["new_checkout"])
        let second = await updates.next()
        #expect(second?.changedKeys == ["max_items"], "same value, new source")
        let third = await updates.next()
        #expect(third?.changedKeys == ["new_checkout", "max_items"])
    }

    @Test func overridesPersistAcrossLaunchesInTheirOwnFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-overrides-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = offlineClient(storage: .directory(directory))
        first.setOverride(Onboarding.video, forKey: .onboarding)
        let second = offlineClient(storage: .directory(directory))
        #expect(second[.onboarding] == .video)
        #expect(second.installationId == first.installationId)
        let file = try String(contentsOf: directory.appendingPathComponent("overrides.json"), encoding: .utf8)
        #expect(file.contains(#""onboarding_flow": "video""#))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("config.vanecache").path))
    }

    @Test func theDebugMenuGroupsKeysAndRefusesValuesThatDoNotFit() throws {
        let keys = [
            RemoteKeys.newCheckout.descriptor, RemoteKeys.maxItems.descriptor, RemoteKeys.onboarding.descriptor,
        ]
        let client = offlineClient(defaults: ["banner": "Hi", "max_items": "50"], keys: keys)
        let menu = client.debugMenu()
        #expect(menu.sections.map(\.title) == ["Checkout", "Experiments", "Limits", DebugMenu.uncategorized])
        let checkout = try #require(menu.item(forKey: "new_checkout"))
        #expect(checkout.title == "New checkout")
        #expect(checkout.description == "The redesigned checkout.")
        #expect(checkout.kind == .bool)
        #expect(checkout.value == nil && checkout.declaredDefault == "false")
        let onboarding = try #require(menu.item(forKey: "onboarding_flow"))
        #expect(onboarding.allowedValues == ["control", "short", "video"])
        #expect(menu.item(forKey: "banner")?.kind == .string)
        #expect(menu.item(forKey: "max_items")?.source == .default)

        #expect(throws: DebugMenuError.self) { try client.setOverrideChecked("maybe", forKey: "new_checkout") }
        #expect(throws: DebugMenuError.self) { try client.setOverrideChecked("carousel", forKey: "onboarding_flow") }
        #expect(throws: DebugMenuError.self) { try client.setOverrideChecked("many", forKey: "max_items") }
        #expect(client.overrides.isEmpty, "a refused value changes nothing")
        try client.setOverrideChecked("true", forKey: "new_checkout")
        #expect(client.debugMenu().item(forKey: "new_checkout")?.isOverridden == true)
    }

    @MainActor
    @Test func theDebugMenuModelFollowsTheClient() async throws {
        let client = offlineClient(keys: [RemoteKeys.newCheckout.descriptor])
        let model = DebugMenuModel(client: client)
        #expect(model.menu.item(forKey: "new_checkout")?.value == nil)
        #expect(model.set("true", forKey: "new_checkout"))
        #expect(model.menu.item(forKey: "new_checkout")?.value == "true")
        #expect(!model.set("sometimes", forKey: "new_checkout"))
        #expect(model.lastError?.key == "new_checkout")
        model.removeOverride(forKey: "new_checkout")
        #expect(model.menu.item(forKey: "new_checkout")?.isOverridden == false)

        // A change made elsewhere reaches the model through the client's updates.
        client.setOverride("false", forKey: "new_checkout")
        for _ in 0..<1000 where model.menu.item(forKey: "new_checkout")?.value != "false" {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(model.menu.item(forKey: "new_checkout")?.value == "false")
        model.removeAllOverrides()
        #expect(client.overrides.isEmpty)
        model.stop()
    }

    @MainActor
    @Test func theObservableSnapshotChangesWithTheClient() async throws {
        let client = offlineClient()
        let observable = ObservableConfig(client: client)
        #expect(observable.snapshot[.newCheckout] == false)
        client.setOverride(true, forKey: .newCheckout)
        for _ in 0..<1000 where observable.snapshot[.newCheckout] == false {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(observable.snapshot[.newCheckout] == true)
        #expect(observable.lastUpdate?.reason == .override)
        observable.stop()
    }

    @Test func theInMemoryDoubleRecordsReadsAndResolvesLikeTheClient() {
        let config = InMemoryConfig(["max_items": "5"], defaults: ["discount": "0.25"])
        config.set(true, forKey: .newCheckout)
        #expect(config[.newCheckout])
        #expect(config[.maxItems] == 5)
        #expect(config[.discount] == 0.25)
        #expect(config.value(forKey: "discount")?.source == .default)
        config.setOverride(false, forKey: .newCheckout)
        #expect(config[.newCheckout] == false)
        #expect(config.value(forKey: "new_checkout")?.source == .override)
        config.set("lots", forKey: "max_items")
        #expect(config[.maxItems] == 20)
        #expect(config.typeMismatches.map(\.key) == ["max_items"])
        #expect(config.wasRead(forKey: .newCheckout))
        #expect(!config.wasRead(forKey: .onboarding))
        #expect(config.readKeys.filter { $0 == "max_items" }.count == 2)
        config.resetRecording()
        #expect(config.readKeys.isEmpty)
    }

    @Test func thePropertyWrapperReadsItsReaderOnEveryAccess() {
        struct CheckoutModel {
            @RemoteValue(.newCheckout, reader: nil) var globalNewCheckout
            let config: InMemoryConfig
            var newCheckout: RemoteValue<Bool> { RemoteValue(.newCheckout, reader: config) }
        }
        let config = InMemoryConfig()
        let model = CheckoutModel(config: config)
        #expect(model.newCheckout.wrappedValue == false)
        #expect(model.newCheckout.projectedValue == nil)
        config.set(true, forKey: .newCheckout)
        #expect(model.newCheckout.wrappedValue == true)
        #expect(model.newCheckout.projectedValue == .remote)
        #expect(model.globalNewCheckout == false, "without a bootstrap, the default")
    }

    @Test func defaultsFilesInBothFormatsAndErrorsThatNameTheFile() throws {
        let flat = try CLIRunner.temporaryFile(#"{"max_items": 30, "new_checkout": true, "layout": {"a": 1}}"#)
        let defaults = try InAppDefaults(contentsOf: URL(fileURLWithPath: flat))
        #expect(defaults["max_items"]?.intValue == 30)
        #expect(defaults["layout"]?.stringValue == #"{"a":1}"#)
        let list = try CLIRunner.temporaryFile(#"[{"name": "max_items", "description": "Cap", "value": 40}]"#)
        #expect(try InAppDefaults(contentsOf: URL(fileURLWithPath: list))["max_items"]?.intValue == 40)
        let bad = try CLIRunner.temporaryFile(#"[{"name": "max_items"}]"#)
        do {
            _ = try InAppDefaults(contentsOf: URL(fileURLWithPath: bad))
            Issue.record("an entry without a value was accepted")
        } catch {
            #expect(error.path == bad)
            #expect(error.message.contains("[0].value"))
        }
        #expect(throws: DefaultsFileError.self) {
            try InAppDefaults(contentsOf: URL(fileURLWithPath: "/nonexistent.json"))
        }
    }

    @Test func backoffDoublesUpToTheMaximumAndReadsRetryAfterDates() {
        let policy = BackoffPolicy(initial: 30, maximum: 100, jitter: 0.5)
        #expect(policy.delay(afterFailures: 1, random: 0) == 30)
        #expect(policy.delay(afterFailures: 2, random: 0) == 60)
        #expect(policy.delay(afterFailures: 3, random: 0) == 100)
        #expect(policy.delay(afterFailures: 50, random: 0) == 100)
        #expect(policy.delay(afterFailures: 1, random: 1) == 15, "jitter takes up to half off")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(BackoffPolicy.retryAfter("120", now: now) == 120)
        #expect(BackoffPolicy.retryAfter("Tue, 14 Nov 2023 22:13:27 GMT", now: now) == 7)
        #expect(BackoffPolicy.retryAfter("soon", now: now) == nil)
        #expect(BackoffPolicy.retryAfter("-5", now: now) == nil)
    }

    @Test func theContextCarriesEveryAttributeAndTheUserIdWins() throws {
        var context = ClientContext(
            appVersion: "2.4.0",
            appBuild: "812",
            os: "ios",
            language: "de-CH",
            country: "CH",
            signals: ["plan": "pro", "beta": true]
        )
        var evaluation = context.evaluationContext(installationId: "install-1")
        #expect(evaluation.randomizationId == "install-1")
        #expect(evaluation["app.version"] == .string("2.4.0"))
        #expect(evaluation["plan"] == .string("pro"))
        #expect(
            evaluation.json().serialized()
                == #"{"randomizationId":"install-1","app.build":"812","app.version":"2.4.0","beta":true,"device.country":"CH","device.language":"de-CH","device.os":"ios","plan":"pro"}"#
        )
        context.userId = "user-9"
        evaluation = context.evaluationContext(installationId: "install-1")
        #expect(evaluation.randomizationId == "user-9")
        #expect(try EvaluationContext(json: evaluation.json()) == evaluation)
    }
}
