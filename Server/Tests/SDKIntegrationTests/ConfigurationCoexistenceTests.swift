import Configuration
import Foundation
import Testing
import Vane
import VaneTesting

// Server-side apps import apple/swift-configuration (Hummingbird 2 reads its own settings through
// it) and Vane in the same file. This file compiling is most of the test: every one of the SDK's
// main types is used below without a module prefix, next to swift-configuration's `ConfigReader`,
// `ConfigKey`, `ConfigValue` and `ConfigSnapshot`. Were a Vane type to take one of those names
// again, the unqualified uses here would become ambiguous and the build would fail.

extension RemoteKeys {
    fileprivate static let coexistenceNewCheckout = FeatureFlag("coexistence_new_checkout", default: false)
    fileprivate static let coexistenceRetryLimit = RemoteKey<Int>("coexistence_retry_limit", default: 3)
}

@Suite(.timeLimit(.minutes(5))) struct ConfigurationCoexistenceTests {
    // swift-configuration's own availability (Configuration 1.0); Linux is unaffected.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func vaneAndSwiftConfigurationAreReadSideBySideWithoutModulePrefixes() throws {
        // swift-configuration's side: a reader over an in-memory provider.
        let settingKey: ConfigKey = "http.port"
        let settingValue: ConfigValue = 8080
        let provider = InMemoryProvider(values: [AbsoluteConfigKey(settingKey): settingValue])
        let settings = ConfigReader(provider: provider)
        #expect(settings.int(forKey: "http.port") == 8080)
        let providerSnapshot: any ConfigSnapshot = provider.snapshot()
        #expect(providerSnapshot.providerName.isEmpty == false)

        // Vane's side: the test double and a snapshot, read through typed keys.
        let flags = InMemoryConfig(["coexistence_new_checkout": "true"], defaults: ["coexistence_retry_limit": "5"])
        let reader: any RemoteConfigReader = flags
        #expect(reader[.coexistenceNewCheckout] == true)
        #expect(reader[.coexistenceRetryLimit] == 5)
        let snapshot = RemoteConfigSnapshot(["coexistence_new_checkout": "off"])
        #expect(snapshot[.coexistenceNewCheckout] == false)
        let resolved: ResolvedValue? = snapshot.value(forKey: "coexistence_new_checkout")
        let coerced: CoercedValue? = resolved?.value
        #expect(coerced?.boolValue == false)
        let key: RemoteKey<Bool> = .coexistenceNewCheckout
        #expect(key.descriptor.kind == .bool)

        // The client and its configuration, as an app declares them.
        let configuration = VaneClient.Configuration(
            serverURL: URL(fileURLWithPath: "/unused"),
            project: "demo",
            environment: "production",
            clientKey: "vane_client_unused",
            storage: .inMemory
        )
        let client = VaneClient(configuration: configuration)
        #expect(client[.coexistenceRetryLimit] == 3)
    }
}
