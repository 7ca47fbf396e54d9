// A small command-line "app" that reads its flags through the Vane SDK from `vane serve`.
// Its flags are declared once, in vane-flags.json; VaneFlagsPlugin generates `Flags` from it at build time.
//
//   swift run --package-path Server vane serve                         # prints a client key for demo/production
//   VANE_CLIENT_KEY=vane_client_… swift run --package-path Server vane-example-app [--country de] [--override key=value]
//       [--user ID] [--track name[=value]]…
//
// It prints what it would show before fetching (bundled defaults or last launch's cache), then
// fetches, activates and prints again. Run it twice: the second launch starts from the cache.
// Reading `checkout_variant` while an experiment runs on it records an exposure; `--track` records
// metric events; both are sent before the app ends, or kept on disk for the next launch.
import Foundation
import Vane

let environment = ProcessInfo.processInfo.environment
var arguments = Array(CommandLine.arguments.dropFirst())
var country: String?
var overrides: [(String, String)] = []
var user: String?
var tracked: [(String, Double?)] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--country" where !arguments.isEmpty:
        country = arguments.removeFirst()
    case "--user" where !arguments.isEmpty:
        user = arguments.removeFirst()
    case "--track" where !arguments.isEmpty:
        let pair = arguments.removeFirst().split(separator: "=", maxSplits: 1).map(String.init)
        tracked.append((pair[0], pair.count == 2 ? Double(pair[1]) : nil))
    case "--override" where !arguments.isEmpty:
        let pair = arguments.removeFirst().split(separator: "=", maxSplits: 1).map(String.init)
        if pair.count == 2 { overrides.append((pair[0], pair[1])) }
    default:
        FileHandle.standardError.write(
            Data(
                "usage: vane-example-app [--country CC] [--override key=value] [--user ID] [--track name[=value]]\n"
                    .utf8
            )
        )
        exit(2)
    }
}
guard let key = environment["VANE_CLIENT_KEY"], !key.isEmpty else {
    FileHandle.standardError.write(
        Data("set VANE_CLIENT_KEY to the client key `vane serve` printed on its first start\n".utf8)
    )
    exit(2)
}
guard let server = URL(string: environment["VANE_SERVER"] ?? "http://127.0.0.1:8080") else {
    FileHandle.standardError.write(Data("VANE_SERVER is not a URL\n".utf8))
    exit(2)
}

// The generated defaults, with a banner that shows where it came from.
var bundledDefaults = Flags.defaults
bundledDefaults["banner_text"] = "Welcome (bundled default)"

var context = ClientContext.current()
context.appVersion = "2.1.0"
if let country { context.country = country }
context.userId = user
let storage =
    environment["VANE_EXAMPLE_STORAGE"].map { URL(fileURLWithPath: $0) }
    ?? URL(fileURLWithPath: ".vane/example-app")
let client = VaneClient(
    configuration: VaneClient.Configuration(
        serverURL: server,
        project: environment["VANE_PROJECT"] ?? "demo",
        environment: environment["VANE_ENVIRONMENT"] ?? "production",
        clientKey: key,
        context: context,
        defaults: bundledDefaults,
        keys: Flags.catalog,
        storage: .directory(storage),
        minimumFetchInterval: 0
    )
)
for (key, value) in overrides { client.setOverride(value, forKey: key) }

let flags = Flags(client)

func source(_ key: FlagsKey) -> String {
    client.value(forKey: key.rawValue)?.source.rawValue ?? "caller default"
}

func show(_ title: String) {
    print("\(title):")
    print("  payments_enabled = \(flags.paymentsEnabled) (\(source(.paymentsEnabled)))")
    print("  banner_text      = \(flags.bannerText) (\(source(.bannerText)))")
    print("  settings_layout  = \(flags.settingsLayout?.sections.joined(separator: ", ") ?? "unreadable")")
    print("  checkout_variant = \(flags.checkoutVariant.rawValue)")
}

show("Before fetching")
do {
    let result = try await client.fetchAndActivate()
    print("Fetched: \(result); active template version \(client.activeTemplateVersion.map(String.init) ?? "none")")
} catch {
    print("Fetch failed, still showing the values above: \(error)")
}
show("After activating")

// Metric events for experiments, then everything waiting goes to the server (an app does this
// when it goes to the background). What cannot be sent now stays on disk for the next launch.
for (name, value) in tracked { client.track(name, value: value) }
do {
    try await client.flush()
} catch {
    print("Events not sent yet: \(error)")
}
print("Events waiting: \(client.queuedEventCount) (dropped: \(client.droppedEventCount))")
// The client writes its files off the caller's thread; a command-line tool waits for them before
// it exits, so the next launch starts from this cache.
await client.waitForPendingWrites()
