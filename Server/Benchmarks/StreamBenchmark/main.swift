import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Vane

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Publish-to-delivery latency and server memory of `vane serve`'s event stream with many idle
// subscribers, beside Hummingbird holding the same number of bare SSE connections
// (`vane-http-baseline`'s /sse); and the delay from a rollout guard's roll-back decision to each
// subscriber's receipt of the version it published (issue #30). Release build, loopback only,
// bounded in time.
//
//     vane-stream-benchmark BIN_DIR [SUBSCRIBERS…]      (default 1000 10000)
//     vane-stream-benchmark nio-sse PORT    (the floor: swift-nio alone, NIOFloorServer.swift)
//     vane-stream-benchmark BIN_DIR cluster NODES SUBSCRIBERS_PER_NODE   (Cluster.swift; cluster-stream-benchmark.sh)
//
// STREAM_PUBLISHES (10) sets the publishes per run, STREAM_ROLLBACKS (3) the guard roll backs
// (0: none); scripts/check-benchmarks makes few.
// Run it through Server/Benchmarks/stream-benchmark.sh, which builds both servers first.

let arguments = CommandLine.arguments.dropFirst()
let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let transport = URLSessionTransport()
// A subscriber process of the cluster run (Cluster.swift).
if arguments.first == "subscribe" {
    do {
        try await runSubscriber(Array(arguments.dropFirst()))
    } catch {
        FileHandle.standardError.write(Data("vane-stream-benchmark subscribe: \(error)\n".utf8))
        exit(1)
    }
}
guard let binDirectory = arguments.first.map({ URL(fileURLWithPath: $0) }) else {
    print("usage: vane-stream-benchmark BIN_DIR [SUBSCRIBERS…]")
    exit(2)
}
let counts =
    arguments.dropFirst().compactMap { Int($0) }.isEmpty ? [1000, 10000] : arguments.dropFirst().compactMap { Int($0) }
let publishes = ProcessInfo.processInfo.environment["STREAM_PUBLISHES"].flatMap { Int($0) } ?? 10
let rollbacks = ProcessInfo.processInfo.environment["STREAM_ROLLBACKS"].flatMap { Int($0) } ?? 3
// The floor's server (NIOFloorServer.swift).
if arguments.first == "nio-sse" {
    guard let port = arguments.dropFirst().first.flatMap({ Int($0) }) else {
        print("usage: vane-stream-benchmark nio-sse PORT")
        exit(2)
    }
    try runNIOFloorServer(port: port)
}
if arguments.dropFirst().first == "cluster" {
    let sizes = arguments.dropFirst(2).compactMap { Int($0) }
    guard sizes.count == 2 else {
        print("usage: vane-stream-benchmark BIN_DIR cluster NODES SUBSCRIBERS_PER_NODE")
        exit(2)
    }
    do {
        try await runCluster(binDirectory: binDirectory, nodes: sizes[0], perNode: sizes[1], publishes: publishes)
    } catch {
        FileHandle.standardError.write(Data("vane-stream-benchmark cluster: \(error)\n".utf8))
        exit(1)
    }
}

/// Progress on standard error, so a slow phase shows where it is.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("[\(Date().formatted(.iso8601))] \(message)\n".utf8))
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
}

// MARK: - Processes

/// A server process with its output in files.
final class ServerProcess {
    let process = Process()
    let directory: URL

    init(executable: URL, arguments: [String], environment: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "vane-stream-bench-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stdout = directory.appendingPathComponent("stdout.log")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stdout)
        try process.run()
    }

    var output: String {
        (try? String(contentsOf: directory.appendingPathComponent("stdout.log"), encoding: .utf8)) ?? ""
    }

    /// Resident memory in bytes, from /proc.
    var residentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// SIGKILL: a graceful stop would wait for streams the baseline never ends.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

func freePort() throws -> Int {
    let channel = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
    defer { try? channel.close().wait() }
    guard let port = channel.localAddress?.port else { throw BenchmarkError(description: "no free port") }
    return port
}

func waitFor(_ what: String, timeout: TimeInterval, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw BenchmarkError(description: "timed out waiting for \(what)") }
        Thread.sleep(forTimeInterval: 0.05)
    }
}

// MARK: - Subscribers

/// When each subscriber saw each version, in monotonic nanoseconds, and by the wall clock in
/// milliseconds since 1970 (what the server's decision times are compared with: one machine,
/// one clock).
final class DeliveryLog: Sendable {
    private let received = NIOLockedValueBox<[Int64: [UInt64]]>([:])
    private let receivedWall = NIOLockedValueBox<[Int64: [Double]]>([:])
    private let opened = NIOLockedValueBox(0)

    func record(version: Int64, at time: UInt64, wall: Double) {
        received.withLockedValue { $0[version, default: []].append(time) }
        receivedWall.withLockedValue { $0[version, default: []].append(wall) }
    }

    func markOpened() { opened.withLockedValue { $0 += 1 } }
    var openedCount: Int { opened.withLockedValue { $0 } }
    func times(of version: Int64) -> [UInt64] { received.withLockedValue { $0[version] ?? [] } }
    func wallTimes(of version: Int64) -> [Double] { receivedWall.withLockedValue { $0[version] ?? [] } }
}

/// Reads one event stream: the first line of the response marks it open; each `id: N` line
/// with a new N is a delivery.
final class SubscriberHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let log: DeliveryLog
    private var pending: [UInt8] = []
    private var lastSeen: Int64 = 0
    private var isOpen = false

    init(log: DeliveryLog) { self.log = log }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = monotonicNanoseconds()
        let wall = Date().timeIntervalSince1970 * 1000
        let buffer = unwrapInboundIn(data)
        pending.append(contentsOf: buffer.readableBytesView)
        if !isOpen, pending.count >= 12 {
            isOpen = true
            log.markOpened()
        }
        let prefix = Array("id: ".utf8)
        while let newline = pending.firstIndex(of: 0x0A) {
            let line = pending[..<newline]
            if line.starts(with: prefix),
                let version = Int64(String(decoding: line.dropFirst(prefix.count), as: UTF8.self)),
                version > lastSeen
            {
                lastSeen = version
                log.record(version: version, at: now, wall: wall)
            }
            pending.removeSubrange(...newline)
        }
    }
}

/// Opens `count` streams, 500 at a time, each waiting until its response has begun.
func subscribe(count: Int, port: Int, path: String, headers: String = "", log: DeliveryLog) throws -> [any Channel] {
    var channels: [any Channel] = []
    let request = ByteBuffer(
        string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\(headers)\r\n"
    )
    let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(SubscriberHandler(log: log))
        }
    }
    var remaining = count
    while remaining > 0 {
        let batch = min(remaining, 500)
        let futures = (0..<batch).map { _ in
            bootstrap.connect(host: "127.0.0.1", port: port).flatMap { channel in
                channel.writeAndFlush(request).map { channel }
            }
        }
        for future in futures { channels.append(try future.wait()) }
        remaining -= batch
        let target = channels.count
        try waitFor("\(target) streams to open", timeout: 60) { log.openedCount >= target }
    }
    return channels
}

func close(_ channels: [any Channel]) {
    for channel in channels { channel.close(promise: nil) }
}

// MARK: - Measurements

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

/// One server's figures at one subscriber count.
struct Measurement {
    var bytesPerSubscriber: Double
    var p50: Double
    var p99: Double
    var max: Double
    var delivered: Int
    var expected: Int
    var publishP50: Double
}

/// Opens `subscribers` streams, measures the server's memory for them, then publishes
/// `publishes` times and times each delivery. `publish(i)` returns the version it made.
func measureFanOut(
    subscribers: Int,
    server: ServerProcess,
    port: Int,
    path: String,
    headers: String,
    publish: (Int) async throws -> Int64
) async throws -> Measurement {
    progress("\(subscribers) subscribers on port \(port)")
    let log = DeliveryLog()
    // Warm-up subscribers, closed again, so the base figure includes the server's steady state.
    close(try subscribe(count: 10, port: port, path: path, headers: headers, log: DeliveryLog()))
    try await Task.sleep(nanoseconds: 1_000_000_000)
    let before = server.residentBytes
    let channels = try subscribe(count: subscribers, port: port, path: path, headers: headers, log: log)
    defer { close(channels) }
    try await Task.sleep(nanoseconds: 2_000_000_000)
    let after = server.residentBytes
    progress("subscribed; publishing")

    var latencies: [Double] = []
    var publishTimes: [Double] = []
    var delivered = 0
    for index in 1...publishes {
        let start = monotonicNanoseconds()
        let version = try await publish(index)
        publishTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
        let deadline = Date().addingTimeInterval(10)
        while log.times(of: version).count < subscribers && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let times = log.times(of: version)
        delivered += times.count
        latencies += times.map { Double($0 - start) / 1e6 }
        try await Task.sleep(nanoseconds: 500_000_000)
    }
    progress("published")
    latencies.sort()
    publishTimes.sort()
    return Measurement(
        bytesPerSubscriber: Double(after - before) / Double(subscribers),
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies.last ?? .nan,
        delivered: delivered,
        expected: subscribers * publishes,
        publishP50: percentile(publishTimes, 0.5)
    )
}

/// A request whose answer is not needed (`request` in Cluster.swift, which fails on anything but 2xx).
func send(_ method: String, _ url: String, headers: [String: String] = [:], body: String? = nil) async throws {
    _ = try await request(method, url, headers: headers, body: body)
}

/// Hummingbird's bare minimum: `vane-http-baseline`'s `/sse` streams and `POST /publish`.
/// The floor: swift-nio alone writing the same bytes to every channel from its event loop
/// (`nio-sse` mode of this executable, NIOFloorServer.swift), a process of its own.
func measureBaseline(subscribers: Int, nioFloor: Bool = false) async throws -> Measurement {
    let port = try freePort()
    let server = try ServerProcess(
        executable: nioFloor
            ? URL(fileURLWithPath: CommandLine.arguments[0])
            : binDirectory.appendingPathComponent("vane-http-baseline"),
        arguments: nioFloor ? ["nio-sse", String(port)] : [String(port)]
    )
    defer { server.stop() }
    try waitFor("the baseline server to start", timeout: 30) {
        (try? ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).wait().close().wait()) != nil
    }
    return try await measureFanOut(subscribers: subscribers, server: server, port: port, path: "/sse", headers: "") {
        index in
        try await send("POST", "http://127.0.0.1:\(port)/publish?version=\(index)")
        return Int64(index)
    }
}

/// A running `vane serve` (SQLite, demo project) and what the benchmark needs to talk to it.
struct VaneServer {
    static let admin = "vane_admin_stream-benchmark-0000000000000000000000000"
    let process: ServerProcess
    let data: URL
    let port: Int
    /// The demo project's client key.
    let key: String
    /// `http://127.0.0.1:PORT/v1/projects/demo/environments/production`.
    var environment: String { "http://127.0.0.1:\(port)/v1/projects/demo/environments/production" }
    let streamPath = "/v1/projects/demo/environments/production/stream"
    var adminHeaders: [String: String] {
        ["Authorization": "Bearer \(Self.admin)", "If-Match": "*", "Content-Type": "application/json"]
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: data)
    }
}

/// Starts `vane serve` for `subscribers` streams. Every subscriber comes from loopback with one
/// key, so the per-address and per-key caps are raised above the count, and the connection cap
/// (4,096 by default) with them; every other setting is the default.
func startVane(subscribers: Int) throws -> VaneServer {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent(
        "vane-stream-bench-\(UUID().uuidString)"
    )
    let server = try ServerProcess(
        executable: binDirectory.appendingPathComponent("vane"),
        arguments: [
            "serve", "--host", "127.0.0.1", "--port", "0", "--admin-key", VaneServer.admin,
            "--max-streams-per-address", String(subscribers + 100), "--max-streams-per-key",
            String(subscribers + 100), "--max-connections", String(max(4096, subscribers + 1000)),
            "--data-dir", data.path,
        ],
        environment: ["VANE_LOG_LEVEL": "error"]
    )
    try waitFor("vane serve to start", timeout: 60) { server.output.contains("(shown once): vane_client_") }
    let output = server.output
    guard
        let banner = output.split(separator: "\n").first,
        let url = banner.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
        let port = url.split(separator: ":").last.flatMap({ Int($0) }),
        let keyLine = output.split(separator: "\n").first(where: { $0.hasPrefix("Client key") }),
        let key = keyLine.split(separator: " ").last
    else {
        server.stop()
        throw BenchmarkError(description: "unexpected banner: \(output)")
    }
    return VaneServer(process: server, data: data, port: port, key: String(key))
}

/// A forced publish of `template` (JSON text) to `vane`'s demo environment.
func publish(_ template: String, to vane: VaneServer) async throws {
    try await send("PUT", "\(vane.environment)/template", headers: vane.adminHeaders, body: template)
}

/// `vane serve` (SQLite, demo project): `GET …/stream` and template publishes through the admin API.
func measureVane(subscribers: Int) async throws -> Measurement {
    let vane = try startVane(subscribers: subscribers)
    defer { vane.stop() }
    func publishValue(_ value: Int) async throws {
        try await publish(#"{"parameters": {"kill_switch": {"defaultValue": {"value": "\#(value)"}}}}"#, to: vane)
    }
    try await publishValue(0)  // version 2: warms up the publish path
    // Last-Event-ID: 2 — the current version — so the streams start quiet.
    return try await measureFanOut(
        subscribers: subscribers,
        server: vane.process,
        port: vane.port,
        path: vane.streamPath,
        headers: "Authorization: Bearer \(vane.key)\r\nLast-Event-ID: 2\r\n"
    ) { index in
        try await publishValue(index)
        return Int64(2 + index)
    }
}

// MARK: - A guard's roll back

/// The figures of the roll backs at one subscriber count: delays from each decision's time to
/// each subscriber's receipt of the version it published.
struct RollbackMeasurement {
    var p50: Double
    var p99: Double
    var max: Double
    var delivered: Int
    var expected: Int
    /// From sending the first regression events to the decision: how soon the guard looked.
    var detectionP50: Double
}

/// Sends `request` and returns its JSON body; a status other than 200 or 201 is an error.
func requestJSON(
    _ method: String,
    _ url: String,
    headers: [String: String],
    body: String? = nil
) async throws -> JSONObject {
    guard let address = URL(string: url) else { throw BenchmarkError(description: "bad URL \(url)") }
    let response = try await transport.send(
        TransportRequest(method: method, url: address, headers: headers, body: body.map { Data($0.utf8) }, timeout: 30)
    )
    let text = String(decoding: response.body, as: UTF8.self)
    guard response.status == 200 || response.status == 201, let object = (try? JSONValue.parse(text))?.objectValue
    else { throw BenchmarkError(description: "\(method) \(url) answered \(response.status): \(text.prefix(300))") }
    return object
}

/// `subscribers` streams on `vane serve`; `rollbacks` times, a rollout of `image_cache` is
/// started at 50 % and the treatment's units crash (400 of 1,000 against 20 of 1,000), so the
/// server's own guard rolls it back. Each delay is a subscriber's receipt of the roll back's
/// version minus the decision's time as the server recorded it.
func measureRollback(subscribers: Int) async throws -> RollbackMeasurement {
    progress("\(subscribers) subscribers, \(rollbacks) guard roll backs")
    let vane = try startVane(subscribers: subscribers)
    defer { vane.stop() }
    try await publish(
        #"{"parameters": {"image_cache": {"defaultValue": {"value": "v1"}, "valueType": "STRING"}}}"#,
        to: vane
    )
    let log = DeliveryLog()
    let channels = try subscribe(
        count: subscribers,
        port: vane.port,
        path: vane.streamPath,
        headers: "Authorization: Bearer \(vane.key)\r\nLast-Event-ID: 2\r\n",
        log: log
    )
    defer { close(channels) }
    let rollouts = "\(vane.environment)/rollouts"
    let clientHeaders = ["Authorization": "Bearer \(vane.key)", "Content-Type": "application/json"]
    var delays: [Double] = []
    var detections: [Double] = []
    var delivered = 0
    for round in 1...max(1, rollbacks) {
        let id = "regression-\(round)"
        let plan =
            #"{"id": "\#(id)", "parameters": [{"key": "image_cache", "value": "v2"}], "steps": [50, 100], "#
            + #""minimumUnitsPerArm": 100, "guardrails": [{"event": "app_crashed", "kind": "conversion", "#
            + #""bad": "increase", "margin": 0}]}"#
        _ = try await requestJSON("POST", rollouts, headers: vane.adminHeaders, body: plan)
        let started = try await requestJSON("POST", "\(rollouts)/\(id)/start", headers: vane.adminHeaders)
        guard let experiment = started["stepExperiment"]?.stringValue else {
            throw BenchmarkError(description: "the started rollout names no step experiment: \(started)")
        }
        let firstSent = Date()
        for batch in regressionEvents(experiment: experiment, round: round) {
            let answer = try await requestJSON(
                "POST",
                "\(vane.environment)/events",
                headers: clientHeaders,
                body: batch
            )
            if answer["rejected"]?.arrayValue?.isEmpty == false { break }  // rolled back already
        }
        // The guard looks at once on stored events (at most once a second).
        var rollout: JSONObject = [:]
        let deadline = Date().addingTimeInterval(30)
        while rollout["state"]?.stringValue != "rolled_back" {
            guard Date() < deadline else { throw BenchmarkError(description: "no roll back in 30 s: \(rollout)") }
            try await Task.sleep(nanoseconds: 20_000_000)
            rollout = try await requestJSON("GET", "\(rollouts)/\(id)", headers: vane.adminHeaders)
        }
        guard
            let decision = rollout["decisions"]?.arrayValue?.last?.objectValue,
            decision["action"]?.stringValue == "roll_back",
            let time = decision["time"]?.stringValue,
            let decided = ISO8601Timestamp.milliseconds(from: time[...], strict: true)
        else { throw BenchmarkError(description: "the roll back's decision is missing: \(rollout)") }
        detections.append(Double(decided) - firstSent.timeIntervalSince1970 * 1000)
        // The roll back is the environment's newest version.
        let versions = try await requestJSON(
            "GET",
            "\(vane.environment)/versions?pageSize=1",
            headers: vane.adminHeaders
        )
        guard
            let newest = versions["versions"]?.arrayValue?.first?.objectValue,
            newest["description"]?.stringValue == "rollout \(id): rolled back",
            let version = newest["versionNumber"]?.stringValue.flatMap({ Int64($0) })
        else { throw BenchmarkError(description: "the newest version is not the roll back: \(versions)") }
        let waitUntil = Date().addingTimeInterval(10)
        while log.wallTimes(of: version).count < subscribers && Date() < waitUntil {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let receipts = log.wallTimes(of: version)
        delivered += receipts.count
        delays += receipts.map { $0 - Double(decided) }
    }
    progress("rolled back")
    delays.sort()
    detections.sort()
    return RollbackMeasurement(
        p50: percentile(delays, 0.5),
        p99: percentile(delays, 0.99),
        max: delays.last ?? .nan,
        delivered: delivered,
        expected: subscribers * max(1, rollbacks),
        detectionP50: percentile(detections, 0.5)
    )
}

/// Event batches (JSON text) for step experiment `experiment`: 1,000 exposed units per arm, 400
/// of the treatment's and 20 of the comparison's crashing after their exposure.
func regressionEvents(experiment: String, round: Int) -> [String] {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    var events: [String] = []
    for index in 0..<1000 {
        for arm in ["treatment", "comparison"] {
            let unit = "r\(round)-\(arm)-\(index)"
            let exposed = ISO8601Timestamp.string(milliseconds: now - 2000)
            events.append(
                #"{"id": "x-\#(unit)", "type": "exposure", "unit": "\#(unit)", "time": "\#(exposed)", "#
                    + #""experiment": "\#(experiment)", "variant": "\#(arm)"}"#
            )
            if arm == "treatment" ? index % 5 < 2 : index % 50 == 0 {
                let crashed = ISO8601Timestamp.string(milliseconds: now - 1000)
                events.append(
                    #"{"id": "c-\#(unit)", "type": "metric", "unit": "\#(unit)", "time": "\#(crashed)", "#
                        + #""name": "app_crashed"}"#
                )
            }
        }
    }
    return stride(from: 0, to: events.count, by: 1000).map {
        #"{"events": ["# + events[$0..<min(events.count, $0 + 1000)].joined(separator: ", ") + "]}"
    }
}

// MARK: - Run

var rows: [(subscribers: Int, vane: Measurement, baseline: Measurement, floor: Measurement)] = []
var rollbackRows: [(subscribers: Int, figures: RollbackMeasurement)] = []
for count in counts {
    rows.append(
        (
            count, try await measureVane(subscribers: count), try await measureBaseline(subscribers: count),
            try await measureBaseline(subscribers: count, nioFloor: true)
        )
    )
    if rollbacks > 0 { rollbackRows.append((count, try await measureRollback(subscribers: count))) }
}

let cores = ProcessInfo.processInfo.activeProcessorCount
print("vane-stream-benchmark, \(publishes) publishes per run, \(cores) cores, \(Date().formatted(.iso8601))")
print()
print(
    "| subscribers | server | delivered | publish → delivery p50 | p99 | max | publish request p50 "
        + "| memory per subscriber |"
)
print("|---|---|---|---|---|---|---|---|")
let ms = { (value: Double) in String(format: "%.1f ms", value) }
let kb = { (value: Double) in String(format: "%.1f KB", value / 1024) }
for row in rows {
    for (name, m) in [
        ("vane serve", row.vane), ("Hummingbird bare SSE (baseline)", row.baseline),
        ("swift-nio alone, one write per channel from its loop (floor)", row.floor),
    ] {
        print(
            "| \(row.subscribers) | \(name) | \(m.delivered)/\(m.expected) | \(ms(m.p50)) | \(ms(m.p99)) | \(ms(m.max)) | "
                + "\(ms(m.publishP50)) | \(kb(m.bytesPerSubscriber)) |"
        )
    }
    print(
        "| \(row.subscribers) | ratio | | \(String(format: "%.2f×", row.vane.p50 / row.baseline.p50)) | "
            + "\(String(format: "%.2f×", row.vane.p99 / row.baseline.p99)) | | | "
            + "\(String(format: "%.2f×", row.vane.bytesPerSubscriber / row.baseline.bytesPerSubscriber)) |"
    )
    print(
        "| \(row.subscribers) | ratio to the floor | | \(String(format: "%.2f×", row.vane.p50 / row.floor.p50)) | "
            + "\(String(format: "%.2f×", row.vane.p99 / row.floor.p99)) | | | "
            + "\(String(format: "%.2f×", row.vane.bytesPerSubscriber / row.floor.bytesPerSubscriber)) |"
    )
}
if !rollbackRows.isEmpty {
    print()
    print(
        "A rollout guard's roll back, \(rollbacks) per run: from the decision's recorded time to each subscriber's receipt"
    )
    print()
    print("| subscribers | delivered | decision → delivery p50 | p99 | max | regression events sent → decision p50 |")
    print("|---|---|---|---|---|---|")
    for row in rollbackRows {
        let m = row.figures
        print(
            "| \(row.subscribers) | \(m.delivered)/\(m.expected) | \(ms(m.p50)) | \(ms(m.p99)) | \(ms(m.max)) | "
                + "\(ms(m.detectionP50)) |"
        )
    }
}
// A run that missed deliveries measured something else: fail, so scripts/check-benchmarks notices.
let complete =
    rows.allSatisfy {
        $0.vane.delivered == $0.vane.expected && $0.baseline.delivered == $0.baseline.expected
            && $0.floor.delivered == $0.floor.expected
    } && rollbackRows.allSatisfy { $0.figures.delivered == $0.figures.expected }
if !complete { FileHandle.standardError.write(Data("some subscribers missed a publish (delivered above)\n".utf8)) }
// Leave without running exit handlers: FoundationNetworking's URLSession machinery can spin at
// process exit on Linux once thousands of sockets have come and gone.
fflush(nil)
_exit(complete ? 0 : 1)
