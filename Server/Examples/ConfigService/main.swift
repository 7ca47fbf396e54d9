// A small Hummingbird service that reads a flag through swift-configuration's ConfigReader, with
// Vane as one provider above the environment. A publish in Vane changes its answers within about
// a second, without a restart.
//
//     VANE_SERVER=http://127.0.0.1:8080 VANE_SERVER_KEY=vane_server_… \
//         swift run --package-path Server vane-config-example
//     curl 'http://127.0.0.1:8090/checkout?user=u1&country=de'
//
// Settings (environment variables, read through the same ConfigReader):
//   VANE_SERVER, VANE_SERVER_KEY, VANE_PROJECT (demo), VANE_ENVIRONMENT (production)
//   VANE_CACHE_FILE     where the last downloaded template is kept (optional)
//   HTTP_PORT           the port (8090; 0 picks a free one), printed as "listening on http://127.0.0.1:PORT"
//   CHECKOUT_NEW_FLOW   the flag's value when Vane has none (the environment is the lower provider)

import Configuration
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Vane
import VaneConfiguration
import VaneService

/// The service; everything lives in a function, so no global state is shared with its handlers.
enum ConfigServiceExample {
    static func run() async throws {
        let environment = ConfigReader(provider: EnvironmentVariablesProvider())
        let logger = Logger(label: "vane-config-example")

        guard let serverText = environment.string(forKey: "vane.server"), let serverURL = URL(string: serverText),
            let serverKey = environment.string(forKey: "vane.server.key", isSecret: true)
        else {
            FileHandle.standardError.write(
                Data("set VANE_SERVER and VANE_SERVER_KEY (a server key of the environment)\n".utf8)
            )
            exit(2)
        }

        let vane = VaneService(
            configuration: VaneService.Configuration(
                client: LocalEvaluationClient.Configuration(
                    serverURL: serverURL,
                    project: environment.string(forKey: "vane.project", default: "demo"),
                    environment: environment.string(forKey: "vane.environment", default: "production"),
                    serverKey: serverKey,
                    cacheFile: environment.string(forKey: "vane.cache.file").map { URL(fileURLWithPath: $0) }
                )
            ),
            logger: logger
        )

        // Vane first, so it wins; the environment answers for keys Vane does not have.
        let config = ConfigReader(providers: [VaneConfigProvider(service: vane), EnvironmentVariablesProvider()])

        let router = Router()
        router.get("checkout") { request, _ -> String in
            let user = request.uri.queryParameters.get("user") ?? "anonymous"
            let country = request.uri.queryParameters.get("country") ?? "us"
            let context: [String: ConfigContextValue] = [
                "randomizationId": .string(user), "device.country": .string(country),
            ]
            // Vane key checkout_new_flow (the provider's default key mapping).
            let newFlow = config.bool(forKey: ConfigKey("checkout.new-flow", context: context), default: false)
            let banner = config.string(forKey: ConfigKey("banner.text", context: context), default: "Welcome!")
            return "\(newFlow ? "new checkout" : "old checkout"); \(banner)\n"
        }

        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname("127.0.0.1", port: environment.int(forKey: "http.port", default: 8090))
            ),
            services: [vane],
            onServerRunning: { channel in
                // Unbuffered, so a test reading the output file sees the line at once.
                FileHandle.standardOutput.write(
                    Data("listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n".utf8)
                )
            },
            logger: logger
        )
        try await app.runService()
    }
}

try await ConfigServiceExample.run()
