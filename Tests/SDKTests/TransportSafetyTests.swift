import Foundation
import Testing
import Vane

/// What a server, a proxy or a wrong URL can do to an app's client (issue #13).
@Suite struct TransportSafetyTests {
    static func client(
        _ url: String,
        transport: ScriptedTransport,
        configure: (inout VaneClient.Configuration) -> Void = { _ in }
    )
        throws -> VaneClient
    {
        var configuration = VaneClient.Configuration(
            serverURL: try #require(URL(string: url)),
            project: "app",
            environment: "prod",
            clientKey: "vane_client_secret",
            storage: .inMemory,
            transport: transport
        )
        configure(&configuration)
        return VaneClient(configuration: configuration)
    }

    static let noTemplate = TransportResponse(
        status: 200,
        headers: ["Content-Type": "application/json"],
        body: Data(#"{"state":"NO_TEMPLATE"}"#.utf8)
    )

    @Test(arguments: [
        "http://config.example.com", "http://10.0.0.8:8080", "HTTP://Config.Example.com/vane",
        // Names that merely look like loopback: DNS decides where they go.
        "http://127.attacker.example", "http://127.0.0.1.nip.example:8080", "http://localhost.attacker.example",
        "http://app.localhost:8080", "http://127.0.0.256", "http://127.1", "http://[::2]", "http://[::ffff:10.0.0.1]",
    ])
    func plainHTTPToAnotherMachineSendsNothing(_ url: String) async throws {
        let transport = ScriptedTransport(Self.noTemplate)
        let client = try Self.client(url, transport: transport)
        await #expect {
            try await client.fetch(minimumInterval: 0)
        } throws: { error in
            guard case VaneError.invalidConfiguration(let message) = error else { return false }
            return message.contains("clear text") && message.contains("allowsInsecureHTTP")
        }
        #expect(transport.requests.isEmpty, "the key never left the app")
    }

    @Test(arguments: [
        "http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://config.example.com",
        "http://127.45.6.7", "http://LOCALHOST", "http://[0:0:0:0:0:0:0:1]", "http://[::ffff:127.0.0.1]:8080",
    ])
    func loopbackAndHTTPSAreSent(_ url: String) async throws {
        let transport = ScriptedTransport(Self.noTemplate)
        let client = try Self.client(url, transport: transport)
        _ = try? await client.fetch(minimumInterval: 0)
        #expect(transport.requests.count == 1)
    }

    @Test func anAppCanOptInToPlainHTTP() async throws {
        let transport = ScriptedTransport(Self.noTemplate)
        let client = try Self.client("http://config.internal", transport: transport) { $0.allowsInsecureHTTP = true }
        _ = try? await client.fetch(minimumInterval: 0)
        #expect(transport.requests.count == 1)
    }

    @Test func aResponseOverTheLimitIsRefusedAndTheActiveValuesStay() async throws {
        let huge = TransportResponse(status: 200, headers: [:], body: Data(repeating: 0x20, count: 2048))
        let transport = ScriptedTransport(huge)
        let client = try Self.client("https://config.example.com", transport: transport) {
            $0.maximumResponseBytes = 1024
            $0.defaults = InAppDefaults(["banner": "offline"])
        }
        await #expect {
            try await client.fetch(minimumInterval: 0)
        } throws: { error in
            guard case VaneError.malformedResponse(let reason) = error else { return false }
            return reason.contains("maximumResponseBytes")
        }
        #expect(client.string(forKey: "banner", default: "") == "offline")
    }
}
