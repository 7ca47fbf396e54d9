import BenchmarkHarness
import Crypto
import Foundation
import Vane
import VaneAuthoring
import VaneCore

// Vane's engine benchmarks. Run in release mode:
//     swift run -c release vane-benchmarks
// Every figure is printed beside a plain Dictionary lookup measured in the same run.

let harness = Harness()
let now = Date(timeIntervalSince1970: 1_800_000_000)

let large = TemplateGenerator.template(parameters: 3000, conditions: 2000)
let typical = TemplateGenerator.template(parameters: 50, conditions: 20)
let largeJSON = large.serialized(.compact)
let context = TemplateGenerator.context

guard let compiledLarge = try? CompiledTemplate(large), let compiledTypical = try? CompiledTemplate(typical) else {
    FileHandle.standardError.write(Data("the generated templates do not compile\n".utf8))
    exit(1)
}
let result = compiledTypical.evaluate(context, at: now)
let dictionary = Dictionary(
    uniqueKeysWithValues: typical.parameters.map { ($0.key, $0.defaultValue?.stringValue ?? "") }
)
let readKeys = typical.parameters.map(\.key)
var readIndex = 0
/// Percent bucketing hashes `seed.` and the randomization id: 43 bytes here, one SHA-256 block.
let bucketId = context.randomizationId ?? ""
let bucketBytes = Array("seed_2.\(bucketId)".utf8)

// `--profile evaluate-large|evaluate-typical|sdk-startup|sdk-read|sdk-flag|sha256|track` just loops one
// operation, for valgrind or perf.
let profiled = CommandLine.arguments.firstIndex(of: "--profile").flatMap {
    $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil
}
if profiled == "sha256" {
    for _ in 0..<5_000_000 { blackHole(PercentBucket.microPercentile(seed: "seed_2", randomizationId: bucketId)) }
    exit(0)
}
if profiled == "sdk-read" || profiled == "sdk-flag" {
    let entries = Dictionary(uniqueKeysWithValues: (0..<3000).map { ("key_\($0)", $0 % 2 == 0 ? "true" : "off") })
    let keys = (0..<3000).map { "key_\($0)" }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-profile-\(UUID().uuidString)")
    try await SDKFixtures.writeCache(directory: directory, entries: entries)
    let client = VaneClient(configuration: SDKFixtures.configuration(directory: directory, entries: entries))
    let flag = FeatureFlag("key_42", default: false)
    for round in 0..<30_000_000 {
        if profiled == "sdk-flag" {
            blackHole(client[flag])
        } else {
            blackHole(client.bool(forKey: keys[round % keys.count], default: false))
        }
    }
    try? FileManager.default.removeItem(at: directory)
    exit(0)
}
if let flag = CommandLine.arguments.firstIndex(of: "--profile"), flag + 1 < CommandLine.arguments.count,
    CommandLine.arguments[flag + 1] == "track"
{
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-profile-\(UUID().uuidString)")
    var configuration = SDKFixtures.configuration(directory: directory, entries: [:])
    configuration.events = EventOptions(maximumQueuedEvents: 5_000_000, batchSize: 1_000, flushInterval: 0)
    let client = VaneClient(configuration: configuration)
    for _ in 0..<2_000_000 { client.track("checkout_completed", value: 39.9, properties: ["currency": "EUR"]) }
    try? FileManager.default.removeItem(at: directory)
    exit(0)
}
if let flag = CommandLine.arguments.firstIndex(of: "--profile"), flag + 1 < CommandLine.arguments.count,
    CommandLine.arguments[flag + 1] == "sdk-startup"
{
    let entries = Dictionary(uniqueKeysWithValues: (0..<3000).map { ("key_\($0)", $0 % 2 == 0 ? "true" : "off") })
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-profile-\(UUID().uuidString)")
    try await SDKFixtures.writeCache(directory: directory, entries: entries)
    let configuration = SDKFixtures.configuration(directory: directory, entries: entries)
    for _ in 0..<2000 { blackHole(VaneClient(configuration: configuration)) }
    try? FileManager.default.removeItem(at: directory)
    exit(0)
}
if let flag = CommandLine.arguments.firstIndex(of: "--profile"), flag + 1 < CommandLine.arguments.count {
    let typicalOnly = CommandLine.arguments[flag + 1] == "evaluate-typical"
    let compiled = typicalOnly ? compiledTypical : compiledLarge
    for _ in 0..<(typicalOnly ? 300_000 : 5000) { blackHole(compiled.evaluate(context, at: now)) }
    exit(0)
}

print("Vane engine benchmarks (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
print(
    "large template: \(large.parameters.count) parameters, \(large.conditions.count) conditions, \(largeJSON.utf8.count) bytes of JSON"
)
print("")

var readIndex2 = 0
var readIndex3 = 0
let sideBySide = harness.measureSideBySide([
    (
        "Dictionary<String, String> lookup (baseline)",
        {
            readIndex = (readIndex + 1) % readKeys.count
            blackHole(dictionary[readKeys[readIndex]])
        }
    ),
    (
        "typed read: result.bool(forKey:default:)",
        {
            readIndex2 = (readIndex2 + 1) % readKeys.count
            blackHole(result.bool(forKey: readKeys[readIndex2], default: false))
        }
    ),
    (
        "typed read: result.string(forKey:default:)",
        {
            readIndex3 = (readIndex3 + 1) % readKeys.count
            blackHole(result.string(forKey: readKeys[readIndex3], default: ""))
        }
    ),
    ("evaluate 50 parameters / 20 conditions", { blackHole(compiledTypical.evaluate(context, at: now)) }),
    ("evaluate 3,000 parameters / 2,000 conditions", { blackHole(compiledLarge.evaluate(context, at: now)) }),
])
let (baseline, typedRead, stringRead, evaluateTypical, evaluateLarge) = (
    sideBySide[0], sideBySide[1], sideBySide[2], sideBySide[3], sideBySide[4]
)
// VaneCore's own SHA-256 (percent bucketing) beside swift-crypto's (BoringSSL, which uses the
// CPU's SHA instructions where it has them) on the same 43 bytes, and beside the lookup.
var readIndex4 = 0
let hashing = harness.measureSideBySide([
    (
        "Dictionary<String, String> lookup (baseline)",
        {
            readIndex4 = (readIndex4 + 1) % readKeys.count
            blackHole(dictionary[readKeys[readIndex4]])
        }
    ),
    ("swift-crypto SHA256.hash(data:), 43 bytes (baseline)", { blackHole(SHA256.hash(data: bucketBytes)) }),
    (
        "VaneCore SHA-256: PercentBucket.microPercentile(seed:randomizationId:), 43 bytes",
        { blackHole(PercentBucket.microPercentile(seed: "seed_2", randomizationId: bucketId)) }
    ),
])
// What fetch does with its request before evaluating: the body parsed, the context read (the
// body of Server/Benchmarks/http-benchmark.sh), beside Foundation's parser on the same bytes.
let fetchBody = Array(
    #"{"context": {"randomizationId": "8f14e45f-ceea-467f-a0e6-1c4f7c1d2a3b", "device.country": "de", "device.os": "ios", "device.language": "de", "app.version": "3.2.1", "plan": "pro", "seats": 12}}"#
        .utf8
)
let fetchBodyData = Data(fetchBody)
let requestReads = harness.measureSideBySide([
    (
        "Foundation JSONSerialization.jsonObject, fetch's body (baseline)",
        { blackHole(try? JSONSerialization.jsonObject(with: fetchBodyData)) }
    ),
    (
        "fetch's body: JSONValue.parse + EvaluationContext(json:)",
        {
            let body = try? JSONValue.parse(fetchBody)
            blackHole(try? EvaluationContext(json: body?.objectValue?["context"] ?? .null))
        }
    ),
])
let quickHarness = Harness(rounds: 7, minimumRoundNanoseconds: 200_000_000)
let compileLarge = quickHarness.measure("compile 3,000 / 2,000 template") {
    blackHole(try? CompiledTemplate(large))
}
let parseLarge = quickHarness.measure("parse JSON + decode 3,000 / 2,000 template") {
    blackHole(try? ConfigTemplate(data: Array(largeJSON.utf8)))
}
let validateLarge = quickHarness.measure("validate 3,000 / 2,000 template") {
    blackHole(large.validate())
}

// The SDK: reads through a client (a lock and a lookup), and a cold start from a 3,000-key cache.
let sdkEntries = Dictionary(
    uniqueKeysWithValues: (0..<3000).map { ("key_\($0)", $0 % 2 == 0 ? "true" : "off") }
)
let sdkKeys = (0..<3000).map { "key_\($0)" }
let sdkDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-bench-\(UUID().uuidString)")
try await SDKFixtures.writeCache(directory: sdkDirectory, entries: sdkEntries)
let sdkConfiguration = SDKFixtures.configuration(directory: sdkDirectory, entries: sdkEntries)
let sdkClient = VaneClient(configuration: sdkConfiguration)
let sdkFlag = FeatureFlag("key_42", default: false)
var sdkIndex = [0, 0, 0]
let sdkReads = harness.measureSideBySide([
    (
        "Dictionary<String, String> lookup, 3,000 keys (baseline)",
        {
            sdkIndex[0] = (sdkIndex[0] + 1) % sdkKeys.count
            blackHole(sdkEntries[sdkKeys[sdkIndex[0]]])
        }
    ),
    (
        "SDK read: client.bool(forKey:default:)",
        {
            sdkIndex[1] = (sdkIndex[1] + 1) % sdkKeys.count
            blackHole(sdkClient.bool(forKey: sdkKeys[sdkIndex[1]], default: false))
        }
    ),
    ("SDK read: client[FeatureFlag]", { blackHole(sdkClient[sdkFlag]) }),
])
// `track` beside a Dictionary insert (a new key each time; the dictionary is emptied, keeping its
// capacity, every 10,000). The client keeps its queue on disk (a write at most once a second, on
// another thread) and sends a batch of 1,000 at a time to the in-process transport. The queue's
// bound is raised so the figure is a `track` that queues, not one that drops: a loop tracks far
// faster than one core encodes batches, and no app tracks hundreds of thousands a second.
let trackDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-track-\(UUID().uuidString)")
var trackConfiguration = SDKFixtures.configuration(directory: trackDirectory, entries: [:])
trackConfiguration.events = EventOptions(maximumQueuedEvents: 5_000_000, batchSize: 1_000, flushInterval: 0)
let trackClient = VaneClient(configuration: trackConfiguration)
let insertKeys = (0..<10_000).map { "event_\($0)" }
var inserted: [String: Double] = [:]
inserted.reserveCapacity(insertKeys.count)
var insertIndex = 0
let tracking = harness.measureSideBySide([
    (
        "Dictionary<String, Double> insert (baseline)",
        {
            if insertIndex == insertKeys.count {
                insertIndex = 0
                inserted.removeAll(keepingCapacity: true)
            }
            inserted[insertKeys[insertIndex]] = 39.9
            insertIndex += 1
        }
    ),
    (
        "SDK: client.track(\"checkout_completed\", value:, properties:)",
        { trackClient.track("checkout_completed", value: 39.9, properties: ["currency": "EUR"]) }
    ),
])
// Baseline: the same 3,000 entries as a JSON object read with Foundation, as a hand-written cache would.
let jsonCacheURL = sdkDirectory.appendingPathComponent("baseline.json")
try JSONSerialization.data(withJSONObject: sdkEntries).write(to: jsonCacheURL)
let startups = quickHarness.measureSideBySide([
    (
        "Foundation: read + JSONSerialization of the 3,000 entries as JSON (baseline)",
        { blackHole(try? JSONSerialization.jsonObject(with: Data(contentsOf: jsonCacheURL)) as? [String: String]) }
    ),
    (
        "SDK startup: VaneClient(configuration:) with a 3,000-key cache",
        { blackHole(VaneClient(configuration: sdkConfiguration)) }
    ),
])
try? FileManager.default.removeItem(at: sdkDirectory)

struct Row {
    let measurement: Harness.Measurement
    let target: String
    let met: Bool?

    /// A figure kept beside its baseline with no target: the ratio, with `digits` decimals.
    static func recorded(_ measurement: Harness.Measurement, of baseline: Harness.Measurement, digits: Int) -> Row {
        let ratio = measurement.nanosecondsPerOperation / baseline.nanosecondsPerOperation
        return Row(
            measurement: measurement,
            target: String(format: "%.\(digits)f× baseline (recorded, no target)", ratio),
            met: nil
        )
    }
}

let readRatio = typedRead.nanosecondsPerOperation / baseline.nanosecondsPerOperation
let stringRatio = stringRead.nanosecondsPerOperation / baseline.nanosecondsPerOperation
let typicalRatio = evaluateTypical.nanosecondsPerOperation / baseline.nanosecondsPerOperation
let largeRatio = evaluateLarge.nanosecondsPerOperation / baseline.nanosecondsPerOperation
let boolReadRatio = sdkReads[1].nanosecondsPerOperation / sdkReads[0].nanosecondsPerOperation
let flagReadRatio = sdkReads[2].nanosecondsPerOperation / sdkReads[0].nanosecondsPerOperation
let startupRatio = startups[1].nanosecondsPerOperation / startups[0].nanosecondsPerOperation
let rows = [
    Row(measurement: baseline, target: "1.00×", met: nil),
    Row(measurement: typedRead, target: String(format: "%.2f× baseline (target ≤ 3×)", readRatio), met: readRatio <= 3),
    Row(
        measurement: stringRead,
        target: String(format: "%.2f× baseline (target ≤ 3×)", stringRatio),
        met: stringRatio <= 3
    ),
    Row(
        measurement: evaluateTypical,
        target: String(format: "%.0f× baseline (target ≤ 40×, issue #32)", typicalRatio),
        met: typicalRatio <= 40
    ),
    Row(
        measurement: evaluateLarge,
        target: String(format: "%.0f× baseline (target ≤ 2,000×, issue #32)", largeRatio),
        met: largeRatio <= 2000
    ),
    Row(measurement: compileLarge, target: "once per publish", met: nil),
    Row(measurement: hashing[0], target: "1.00×", met: nil),
    Row(measurement: hashing[1], target: "1.00× (SHA-256 baseline)", met: nil),
    Row(
        measurement: hashing[2],
        target: String(
            format: "%.2f× swift-crypto, %.1f× the lookup (recorded, no target)",
            hashing[2].nanosecondsPerOperation / hashing[1].nanosecondsPerOperation,
            hashing[2].nanosecondsPerOperation / hashing[0].nanosecondsPerOperation
        ),
        met: nil
    ),
    Row(measurement: sdkReads[0], target: "1.00×", met: nil),
    Row(
        measurement: sdkReads[1],
        target: String(format: "%.2f× baseline (target ≤ 1.2×, issue #32)", boolReadRatio),
        met: boolReadRatio <= 1.2
    ),
    Row(
        measurement: sdkReads[2],
        target: String(format: "%.2f× baseline (target ≤ 1.2×, issue #32)", flagReadRatio),
        met: flagReadRatio <= 1.2
    ),
    Row(measurement: tracking[0], target: "1.00×", met: nil),
    .recorded(tracking[1], of: tracking[0], digits: 1),
    Row(measurement: startups[0], target: "1.00×", met: nil),
    Row(
        measurement: startups[1],
        target: String(format: "%.2f× baseline (target ≤ 0.2×, issue #32)", startupRatio),
        met: startupRatio <= 0.2
    ),
    Row(measurement: requestReads[0], target: "1.00×", met: nil),
    .recorded(requestReads[1], of: requestReads[0], digits: 2),
    Row(measurement: parseLarge, target: "once per publish", met: nil),
    Row(measurement: validateLarge, target: "once per publish", met: nil),
]

print("| benchmark | median per operation | ratio / target | met |")
print("|---|---|---|---|")
for row in rows {
    let met = row.met.map { $0 ? "yes" : "NO" } ?? "–"
    print(
        "| \(row.measurement.name) | \(formatTime(row.measurement.nanosecondsPerOperation)) | \(row.target) | \(met) |"
    )
}
// Last: the client's queue file is written once a second until the program ends.
try? FileManager.default.removeItem(at: trackDirectory)
