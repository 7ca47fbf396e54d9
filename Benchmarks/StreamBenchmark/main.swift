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
// (`vane-http-baseline`'s /sse). Release build, loopback only, bounded in time.
//
//     vane-stream-benchmark BIN_DIR [SUBSCRIBERS…]      (default 1000 10000)
//
// Run it through Benchmarks/stream-benchmark.sh, which builds both servers first.

let arguments = CommandLine.arguments.dropFirst()
guard let binDirectory = arguments.first.map({ URL(fileURLWithPath: $0) }) else {
    print("usage: vane-stream-benchmark BIN_DIR [SUBSCRIBERS…]")
    exit(2)
}
let counts =
    arguments.dropFirst().compactMap { Int($0) }.isEmpty ? [1000, 10000] : arguments.dropFirst().compactMap { Int($0) }
let publishes = 10
let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)

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
        process.standardError = FileHandle.nullDevice
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

    func stop() {
        process.terminate()
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

/// When each subscriber saw each version, in monotonic nanoseconds.
final class DeliveryLog: Sendable {
    private let received = NIOLockedValueBox<[Int64: [UInt64]]>([:])
    private let opened = NIOLockedValueBox(0)

    func record(version: Int64, at time: UInt64) {
        received.withLockedValue { $0[version, default: []].append(time) }
    }

    func markOpened() { opened.withLockedValue { $0 += 1 } }
    var openedCount: Int { opened.withLockedValue { $0 } }
    func times(of version: Int64) -> [UInt64] { received.withLockedValue { $0[version] ?? [] } }
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
        let now = DispatchTime.now().uptimeNanoseconds
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
                log.record(version: version, at: now)
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

struct Row {
    var subscribers: Int
    var baselineBytesPerSubscriber: Double
    var vaneBytesPerSubscriber: Double
    var p50: Double
    var p99: Double
    var max: Double
    var delivered: Int
    var expected: Int
    var publishP50: Double
}

func measureBaseline(subscribers: Int) throws -> Double {
    let port = try freePort()
    let server = try ServerProcess(
        executable: binDirectory.appendingPathComponent("vane-http-baseline"),
        arguments: [String(port)]
    )
    defer { server.stop() }
    Thread.sleep(forTimeInterval: 1)
    let log = DeliveryLog()
    // Warm up with a few connections, so the base figure includes the server's steady state.
    close(try subscribe(count: 10, port: port, path: "/sse", log: log))
    Thread.sleep(forTimeInterval: 1)
    let before = server.residentBytes
    let channels = try subscribe(count: subscribers, port: port, path: "/sse", log: DeliveryLog())
    Thread.sleep(forTimeInterval: 2)
    let after = server.residentBytes
    close(channels)
    return Double(after - before) / Double(subscribers)
}

func measureVane(subscribers: Int) async throws -> Row {
    let admin = "vane_admin_stream-benchmark-0000000000000000000000000"
    let server = try ServerProcess(
        executable: binDirectory.appendingPathComponent("vane"),
        arguments: ["serve", "--host", "127.0.0.1", "--port", "0", "--admin-key", admin, "--rate-limit", "0"]
            + [
                "--data-dir",
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "vane-stream-bench-data-\(UUID().uuidString)"
                ).path,
            ],
        environment: ["VANE_LOG_LEVEL": "error"]
    )
    defer { server.stop() }
    try waitFor("vane serve to start", timeout: 60) { server.output.contains("(shown once): vane_client_") }
    let output = server.output
    guard
        let banner = output.split(separator: "\n").first,
        let url = banner.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
        let port = url.split(separator: ":").last.flatMap({ Int($0) }),
        let keyLine = output.split(separator: "\n").first(where: { $0.hasPrefix("Client key") }),
        let key = keyLine.split(separator: " ").last
    else { throw BenchmarkError(description: "unexpected banner: \(output)") }
    let environmentPath = "/v1/projects/demo/environments/production"
    let transport = URLSessionTransport()

    func publish(_ value: Int) async throws -> Double {
        let template = #"{"parameters": {"kill_switch": {"defaultValue": {"value": "\#(value)"}}}}"#
        guard let url = URL(string: "http://127.0.0.1:\(port)\(environmentPath)/template") else {
            throw BenchmarkError(description: "bad URL")
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let response = try await transport.send(
            TransportRequest(
                method: "PUT",
                url: url,
                headers: ["Authorization": "Bearer \(admin)", "If-Match": "*", "Content-Type": "application/json"],
                body: Data(template.utf8),
                timeout: 30
            )
        )
        guard response.status == 200 else { throw BenchmarkError(description: "publish answered \(response.status)") }
        return Double(start)
    }

    _ = try await publish(0)  // version 2: warms up the publish path
    let streamPath = "\(environmentPath)/stream"
    // Last-Event-ID: 2 — the current version — so the stream starts quiet.
    let headers = "Authorization: Bearer \(key)\r\nLast-Event-ID: 2\r\n"
    let log = DeliveryLog()
    // Warm-up subscribers, closed again.
    close(try subscribe(count: 10, port: port, path: streamPath, headers: headers, log: DeliveryLog()))
    try await Task.sleep(nanoseconds: 1_000_000_000)
    let before = server.residentBytes
    let channels = try subscribe(count: subscribers, port: port, path: streamPath, headers: headers, log: log)
    defer { close(channels) }
    try await Task.sleep(nanoseconds: 2_000_000_000)
    let after = server.residentBytes

    var latencies: [Double] = []
    var publishTimes: [Double] = []
    var delivered = 0
    for index in 1...publishes {
        let version = Int64(2 + index)
        let start = try await publish(index)
        publishTimes.append((Double(DispatchTime.now().uptimeNanoseconds) - start) / 1e6)
        let deadline = Date().addingTimeInterval(10)
        while log.times(of: version).count < subscribers && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let times = log.times(of: version)
        delivered += times.count
        latencies += times.map { (Double($0) - start) / 1e6 }
        try await Task.sleep(nanoseconds: 500_000_000)
    }
    latencies.sort()
    publishTimes.sort()
    return Row(
        subscribers: subscribers,
        baselineBytesPerSubscriber: 0,
        vaneBytesPerSubscriber: Double(after - before) / Double(subscribers),
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies.last ?? .nan,
        delivered: delivered,
        expected: subscribers * publishes,
        publishP50: percentile(publishTimes, 0.5)
    )
}

// MARK: - Run

var rows: [Row] = []
for count in counts {
    var row = try await measureVane(subscribers: count)
    row.baselineBytesPerSubscriber = try measureBaseline(subscribers: count)
    rows.append(row)
}
try await group.shutdownGracefully()

let cores = ProcessInfo.processInfo.activeProcessorCount
print("vane-stream-benchmark, \(publishes) publishes per run, \(cores) cores, \(Date().formatted(.iso8601))")
print()
print(
    "| subscribers | delivered | publish → delivery p50 | p99 | max | publish request p50 | server memory per subscriber | Hummingbird bare SSE per subscriber | ratio |"
)
print("|---|---|---|---|---|---|---|---|---|")
for row in rows {
    let ms = { (value: Double) in String(format: "%.1f ms", value) }
    let kb = { (value: Double) in String(format: "%.1f KB", value / 1024) }
    print(
        "| \(row.subscribers) | \(row.delivered)/\(row.expected) | \(ms(row.p50)) | \(ms(row.p99)) | \(ms(row.max)) | "
            + "\(ms(row.publishP50)) | \(kb(row.vaneBytesPerSubscriber)) | \(kb(row.baselineBytesPerSubscriber)) | "
            + String(format: "%.2f×", row.vaneBytesPerSubscriber / row.baselineBytesPerSubscriber) + " |"
    )
}
