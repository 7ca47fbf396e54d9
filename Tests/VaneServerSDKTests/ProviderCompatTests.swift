// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
import Configuration
import ConfigurationTesting
import Foundation
import Testing
import Vane
import VaneConfiguration
import VaneService

/// swift-configuration's own conformance test, against a provider whose service started from a
/// template file holding the values the test expects (under the default snake_case key mapping).
@Suite(.timeLimit(.minutes(2))) struct ProviderCompatTests {
    @available(VaneServerSDK, *)
    static let template = """
        {
          "parameters": {
            "string": {"defaultValue": {"value": "Hello"}},
            "other_string": {"defaultValue": {"value": "Other Hello"}},
            "int": {"defaultValue": {"value": "42"}},
            "other_int": {"defaultValue": {"value": "24"}},
            "double": {"defaultValue": {"value": "3.14"}},
            "other_double": {"defaultValue": {"value": "2.72"}},
            "bool": {"defaultValue": {"value": "true"}},
            "other_bool": {"defaultValue": {"value": "false"}},
            "bytes": {"defaultValue": {"value": "bWFnaWM="}},
            "other_bytes": {"defaultValue": {"value": "bWFnaWMy"}},
            "stringy_array": {"defaultValue": {"value": "[\\"Hello\\", \\"World\\"]"}},
            "other_stringy_array": {"defaultValue": {"value": "Hello, Swift"}},
            "inty_array": {"defaultValue": {"value": "[42, 24]"}},
            "other_inty_array": {"defaultValue": {"value": "16,32"}},
            "doubly_array": {"defaultValue": {"value": "[3.14, 2.72]"}},
            "other_doubly_array": {"defaultValue": {"value": "[0.9, 1.8]"}},
            "booly_array": {"defaultValue": {"value": "[true, false]"}},
            "other_booly_array": {"defaultValue": {"value": "[false, true, true]"}},
            "byte_chunky_array": {"defaultValue": {"value": "[\\"bWFnaWM=\\", \\"bWFnaWMy\\"]"}},
            "other_byte_chunky_array": {"defaultValue": {"value": "bWFnaWM=, bWFnaWMy, bWFnaWM="}}
          },
          "version": {"versionNumber": "7"}
        }
        """

    /// A service that starts from `template` on disk and is never run (no server needed).
    @available(VaneServerSDK, *)
    static func service(template: String = template) throws -> (VaneService, URL) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-compat-\(UUID().uuidString).json"
        )
        try Data(template.utf8).write(to: file)
        let service = VaneService(
            configuration: VaneService.Configuration(
                client: LocalEvaluationClient.Configuration(
                    serverURL: URL(fileURLWithPath: "/"),
                    project: "demo",
                    environment: "production",
                    serverKey: "unused",
                    templateFile: file
                )
            )
        )
        return (service, file)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func swiftConfigurationsProviderCompatTestPasses() async throws {
        let (service, file) = try Self.service()
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(service.client.templateVersion == 7)
        #expect(service.client.startupTemplate?.origin == .templateFile)
        try await ProviderCompatTest(provider: VaneConfigProvider(service: service)).runTest()
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func valuesThatDoNotReadAsTheTypeAreErrorsAndTheReaderFallsBack() throws {
        let (service, file) = try Self.service()
        defer { try? FileManager.default.removeItem(at: file) }
        let provider = VaneConfigProvider(service: service, options: .init(secretKeys: ["other_string"]))
        #expect(throws: VaneValueTypeError.self) {
            try provider.value(forKey: AbsoluteConfigKey(["string"]), type: .int)
        }
        #expect(throws: VaneValueTypeError.self) {
            try provider.value(forKey: AbsoluteConfigKey(["double"]), type: .int)
        }
        let reader = ConfigReader(provider: provider)
        #expect(reader.int(forKey: "string", default: 5) == 5)
        #expect(reader.double(forKey: "int") == 42)
        #expect(reader.string(forKey: "int") == "42")
        let secret = try provider.value(forKey: AbsoluteConfigKey(["other", "string"]), type: .string)
        #expect(secret.value?.isSecret == true)
        #expect(try provider.value(forKey: AbsoluteConfigKey(["string"]), type: .string).value?.isSecret == false)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func keysMapToVaneKeysAsDocumented() {
        let snake = VaneKeyMapping.snakeCase
        #expect(snake.vaneKey(for: ["checkout", "new-flow"]) == "checkout_new_flow")
        #expect(snake.vaneKey(for: ["checkout", "newFlow"]) == "checkout_new_flow")
        #expect(snake.vaneKey(for: ["http", "maxRetryCount"]) == "http_max_retry_count")
        #expect(snake.vaneKey(for: ["HTTPPort"]) == "http_port")
        #expect(snake.vaneKey(for: ["payments_enabled"]) == "payments_enabled")
        #expect(snake.vaneKey(for: ["byteChunky", "array"]) == "byte_chunky_array")
        #expect(VaneKeyMapping.identity.vaneKey(for: ["checkout", "new-flow"]) == "checkout.new-flow")
        let custom = VaneKeyMapping { "shop_" + $0.joined(separator: "_") }
        #expect(custom.vaneKey(for: ["retries"]) == "shop_retries")
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func theContextMapsToAnEvaluationContext() {
        let mapping = VaneContextMapping(randomizationIdKey: "user")
        let context = mapping.evaluationContext(for: [
            "user": .string("u1"), "device.country": .string("de"), "seats": .int(3), "beta": .bool(true),
        ])
        #expect(context.randomizationId == "u1")
        #expect(context.attributes["device.country"] == .string("de"))
        #expect(context.attributes["seats"] == .number(3))
        #expect(context.attributes["beta"] == .bool(true))
        #expect(context.attributes["user"] == nil)
    }
}
#endif
