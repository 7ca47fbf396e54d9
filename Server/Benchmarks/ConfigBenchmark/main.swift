import BenchmarkHarness
import Configuration
import Foundation
import Vane
import VaneConfiguration
import VaneCore
import VaneService

// A ConfigReader lookup of a targeted flag through VaneConfigProvider beside the same lookup
// through swift-configuration's InMemoryProvider (target: at most 3×). Run in release mode:
//     nice -n 19 swift build -c release --package-path Server --scratch-path Server/.build-release-sdk --product vane-config-benchmark
//     Server/.build-release-sdk/release/vane-config-benchmark

let template = """
    {
      "conditions": [
        {"name": "dach", "expression": "device.country in ['de', 'at', 'ch']"},
        {"name": "new_flow_rollout", "expression": "percent('checkout_new_flow') <= 50"},
        {"name": "pro", "expression": "app.customSignal['plan'].exactlyMatches(['pro'])"}
      ],
      "parameters": {
        "checkout_new_flow": {
          "defaultValue": {"value": "false"},
          "conditionalValues": {"pro": {"value": "true"}, "dach": {"value": "true"}, "new_flow_rollout": {"value": "true"}}
        },
        "banner_text": {"defaultValue": {"value": "Welcome!"}, "conditionalValues": {"dach": {"value": "Willkommen!"}}},
        "retry_limit": {"defaultValue": {"value": "3"}}
      },
      "version": {"versionNumber": "1"}
    }
    """
let file = FileManager.default.temporaryDirectory.appendingPathComponent(
    "vane-config-benchmark-\(UUID().uuidString).json"
)
try Data(template.utf8).write(to: file)

// The service starts from the file and is never run: no network in the measured path.
let service = VaneService(
    configuration: VaneService.Configuration(
        client: LocalEvaluationClient.Configuration(
            serverURL: URL(fileURLWithPath: "/"),
            project: "benchmark",
            environment: "production",
            serverKey: "unused",
            templateFile: file
        )
    )
)
guard service.client.templateVersion == 1 else {
    FileHandle.standardError.write(Data("the benchmark template did not load\n".utf8))
    exit(1)
}

// A user in Germany, not pro: the first condition in template order (dach) decides.
let context: [String: ConfigContextValue] = ["randomizationId": .string("user-42"), "device.country": .string("de")]
let flagKey = ConfigKey("checkout.new-flow", context: context)
let vaneReader = ConfigReader(provider: VaneConfigProvider(service: service))
let memoryReader = ConfigReader(
    provider: InMemoryProvider(values: [AbsoluteConfigKey(["checkout", "new-flow"], context: context): true])
)
guard vaneReader.bool(forKey: flagKey, default: false),
    memoryReader.bool(forKey: flagKey, default: false)
else {
    FileHandle.standardError.write(Data("the lookups do not find the flag\n".utf8))
    exit(1)
}

print("ConfigReader lookup of a targeted flag (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
let harness = Harness()
let results = harness.measureSideBySide([
    ("InMemoryProvider (baseline)", { blackHole(memoryReader.bool(forKey: flagKey, default: false)) }),
    ("VaneConfigProvider", { blackHole(vaneReader.bool(forKey: flagKey, default: false)) }),
])
for result in results {
    print(
        "  \(result.name.padding(toLength: 30, withPad: " ", startingAt: 0)) \(formatTime(result.nanosecondsPerOperation))"
    )
}
let ratio = results[1].nanosecondsPerOperation / results[0].nanosecondsPerOperation
print(String(format: "  ratio: %.2f× the in-memory provider (target: at most 3×)", ratio))
try? FileManager.default.removeItem(at: file)
