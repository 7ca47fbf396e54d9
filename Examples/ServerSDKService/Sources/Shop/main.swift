import Configuration
import Foundation
import VaneConfiguration
import VaneService

// Reads `checkout.theme` through swift-configuration, with Vane as the first provider, for an
// anonymous user and for a user on the pro plan, and prints both:
//     VANE_SERVER=http://127.0.0.1:8080 VANE_SERVER_KEY=vane_server_… swift run Shop
// The project and environment are the server's demo/production unless VANE_PROJECT and
// VANE_ENVIRONMENT say otherwise.

let environment = ProcessInfo.processInfo.environment
guard let server = environment["VANE_SERVER"].flatMap(URL.init(string:)),
    let serverKey = environment["VANE_SERVER_KEY"]
else {
    FileHandle.standardError.write(Data("set VANE_SERVER (the server's URL) and VANE_SERVER_KEY (a server key)\n".utf8))
    exit(64)
}

let vane = VaneService(
    configuration: .init(
        client: .init(
            serverURL: server,
            project: environment["VANE_PROJECT"] ?? "demo",
            environment: environment["VANE_ENVIRONMENT"] ?? "production",
            serverKey: serverKey
        )
    )
)
let config = ConfigReader(providers: [
    VaneConfigProvider(service: vane),
    EnvironmentVariablesProvider(),
])

// The service keeps the template current while it runs; a real service runs it in its service
// group (`ServiceGroup(services: [vane, …])`). Here it runs until the first download has arrived.
let running = Task { try await vane.run() }
var waited = 0
while vane.client.templateVersion == nil && waited < 300 {
    try await Task.sleep(for: .milliseconds(100))
    waited += 1
}
guard let version = vane.client.templateVersion else {
    FileHandle.standardError.write(Data("no template from \(server) in 30 s\n".utf8))
    exit(1)
}
print("template version: \(version)")
print("anonymous: \(config.string(forKey: "checkout.theme", default: "none"))")
let pro = ConfigKey("checkout.theme", context: ["randomizationId": .string("user-42"), "plan": "pro"])
print("pro plan: \(config.string(forKey: pro, default: "none"))")
running.cancel()
try await running.value
