// The server SDK: compiled only with the `ServerSDK` trait (`swift test --traits ServerSDK`).
#if ServerSDK
import Configuration
import Foundation
import Testing
import VaneConfiguration
import VaneService

// Sources/VaneConfiguration/Documentation.docc/ServerSideSwiftWithSwiftConfiguration.md's
// snippets, compiled and run against a service that starts from a template file and is never run
// (no server). Each test names the section it is copied from.

// "Test code that reads configuration": the code under test takes a ConfigReader.
struct CheckoutRoutes {
    let config: ConfigReader
    var usesNewFlow: Bool { config.bool(forKey: "checkout.new-flow", default: false) }
}

@Suite struct ServerSDKArticleTests {
    static let template = """
        {"conditions": [{"name": "pro", "expression": "app.customSignal['plan'].exactlyMatches(['pro'])"}],
         "parameters": {"checkout_new_flow": {"defaultValue": {"value": "false"},
                                              "conditionalValues": {"pro": {"value": "true"}}},
                        "pool_size": {"defaultValue": {"value": "25"}}}}
        """

    /// The article's service: from a template file, never run.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func service(templateFile file: URL) -> VaneService {
        VaneService(
            configuration: .init(
                client: .init(
                    serverURL: URL(fileURLWithPath: "/"),
                    project: "shop",
                    environment: "test",
                    serverKey: "unused",
                    templateFile: file
                )
            )
        )
    }

    static func templateFile() throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-article-\(UUID().uuidString).json"
        )
        try Data(template.utf8).write(to: file)
        return file
    }

    // "Test code that reads configuration", the first snippet: no Vane involved.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func codeThatTakesAReaderIsTestedWithAnInMemoryProvider() {
        let config = ConfigReader(provider: InMemoryProvider(values: ["checkout.new-flow": true]))
        #expect(CheckoutRoutes(config: config).usesNewFlow)
    }

    // "Test code that reads configuration", the second snippet, and "Read values for a request's
    // user": the key maps to checkout_new_flow, the context's plan is the custom signal.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func vanesRulesAreTestedWithAServiceFromATemplateFile() throws {
        let file = try Self.templateFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let vane = Self.service(templateFile: file)
        let config = ConfigReader(provider: VaneConfigProvider(service: vane))

        let pro = ConfigKey("checkout.new-flow", context: ["plan": "pro"])
        #expect(config.bool(forKey: pro, default: false))
        #expect(config.bool(forKey: "checkout.new-flow", default: true) == false)
        let user = ConfigKey("checkout.new-flow", context: ["randomizationId": .string("user-42"), "plan": "pro"])
        #expect(config.bool(forKey: user, default: false))
    }

    // "Create the service and the reader": a key Vane does not have is the next provider's.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aKeyVaneDoesNotHaveIsTheNextProvidersOrTheDefault() throws {
        let file = try Self.templateFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let vane = Self.service(templateFile: file)
        let config = ConfigReader(providers: [
            VaneConfigProvider(service: vane),
            InMemoryProvider(values: ["checkout.new-flow": true, "http.timeout": 5]),
        ])
        #expect(config.bool(forKey: "checkout.new-flow", default: true) == false, "Vane first: it wins")
        #expect(config.int(forKey: "http.timeout", default: 30) == 5)
        #expect(config.int(forKey: "http.retries", default: 3) == 3)
    }

    // "Follow live updates": the watch starts with the value in use.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aWatchStartsWithTheValueInUse() async throws {
        let file = try Self.templateFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let config = ConfigReader(provider: VaneConfigProvider(service: Self.service(templateFile: file)))
        let first = try await config.watchInt(forKey: "pool.size", default: 10) { updates -> Int? in
            for await size in updates { return size }
            return nil
        }
        #expect(first == 25)
    }

    // "What happens while Vane is unreachable": without either file, the default until a download.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func withoutAFileEveryLookupIsTheDefault() {
        let vane = Self.service(templateFile: URL(fileURLWithPath: "/nonexistent/vane-template.json"))
        let config = ConfigReader(provider: VaneConfigProvider(service: vane))
        #expect(vane.client.startupTemplate == nil)
        #expect(config.int(forKey: "pool.size", default: 10) == 10)
    }
}
#endif
