import Foundation
import NIOCore
import Vane

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The fan-out across nodes (issue #32): NODES `vane serve` processes on one PostgreSQL server,
// SUBSCRIBERS idle streams on each, every publish made on the first node and heard on all of them
// (the others learn of it through LISTEN/NOTIFY). One process holds at most ~19,500 sockets here,
// so the subscribers of each node are held by processes of their own (this executable in its
// `subscribe` mode). Receive times and publish times are both CLOCK_MONOTONIC, one clock for every
// process on the machine.
//
//     vane-stream-benchmark BIN_DIR cluster NODES SUBSCRIBERS_PER_NODE     (VANE_TEST_POSTGRES_URL set)
//     vane-stream-benchmark subscribe PORT PATH COUNT FIRST_VERSION LAST_VERSION OUT_FILE   (STREAM_HEADERS set)

/// CLOCK_MONOTONIC in nanoseconds: the same clock in every process of the machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// `subscribe` mode: opens COUNT streams, creates OUT_FILE.open when all have begun, then waits
/// until each has seen every version FIRST…LAST (or OUT_FILE.stop appears) and writes one line
/// per version to OUT_FILE: the version, then every receive time.
func runSubscriber(_ arguments: [String]) async throws -> Never {
    guard arguments.count == 6, let port = Int(arguments[0]), let count = Int(arguments[2]),
        let first = Int64(arguments[3]), let last = Int64(arguments[4]), first <= last
    else {
        throw BenchmarkError(description: "usage: vane-stream-benchmark subscribe PORT PATH COUNT FIRST LAST OUT_FILE")
    }
    let path = arguments[1]
    let output = arguments[5]
    let headers = ProcessInfo.processInfo.environment["STREAM_HEADERS"] ?? ""
    let log = DeliveryLog()
    let channels = try subscribe(count: count, port: port, path: path, headers: headers, log: log)
    _ = FileManager.default.createFile(atPath: output + ".open", contents: nil)
    while !FileManager.default.fileExists(atPath: output + ".stop") {
        if (first...last).allSatisfy({ log.times(of: $0).count >= count }) { break }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    let lines = (first...last).map { version in
        ([String(version)] + log.times(of: version).map(String.init)).joined(separator: " ")
    }
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: output))
    close(channels)
    fflush(nil)
    _exit(0)
}

/// Sends a request and returns its body; anything but 2xx fails.
func request(_ method: String, _ url: String, headers: [String: String] = [:], body: String? = nil) async throws -> Data
{
    guard let url = URL(string: url) else { throw BenchmarkError(description: "bad URL \(url)") }
    let response = try await transport.send(
        TransportRequest(method: method, url: url, headers: headers, body: body.map { Data($0.utf8) }, timeout: 30)
    )
    guard (200..<300).contains(response.status) else {
        throw BenchmarkError(
            description:
                "\(method) \(url) answered \(response.status): \(String(decoding: response.body, as: UTF8.self))"
        )
    }
    return response.body
}

/// `cluster` mode: see the top of this file. Prints a Markdown table; exits 1 when a subscriber
/// missed a publish.
func runCluster(binDirectory: URL, nodes nodeCount: Int, perNode: Int, publishes: Int) async throws -> Never {
    guard let database = ProcessInfo.processInfo.environment["VANE_TEST_POSTGRES_URL"] else {
        throw BenchmarkError(
            description: "cluster mode needs VANE_TEST_POSTGRES_URL (run it through scripts/with-postgres)"
        )
    }
    let admin = "vane_admin_stream-benchmark-0000000000000000000000000"
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("vane-cluster-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let secret = work.appendingPathComponent("secret")
    // Nodes on one database share the secret; vane refuses one with too few different characters.
    let secretText = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    try Data(secretText.utf8).write(to: secret)

    var nodes: [(server: ServerProcess, port: Int)] = []
    defer { for node in nodes { node.server.stop() } }
    func startNode(_ index: Int) async throws {
        let port = try freePort()
        let server = try ServerProcess(
            executable: binDirectory.appendingPathComponent("vane"),
            // As in the one-node run: all subscribers share loopback and one key, so the per-address
            // and per-key caps are raised above the count, and the connection cap with them.
            arguments: [
                "serve", "--host", "127.0.0.1", "--port", String(port), "--database", database,
                "--data-dir", work.appendingPathComponent("node-\(index)").path, "--admin-key", admin,
                "--secret-file", secret.path, "--no-demo",
                "--max-streams-per-address", String(perNode + 100), "--max-streams-per-key", String(perNode + 100),
                "--max-connections", String(max(4096, perNode + 1000)),
            ],
            environment: ["VANE_LOG_LEVEL": "error"]
        )
        nodes.append((server, port))
        let deadline = Date().addingTimeInterval(60)
        while (try? await request("GET", "http://127.0.0.1:\(port)/readyz")) == nil {
            guard Date() < deadline else {
                throw BenchmarkError(description: "node \(index) did not start: \(server.output)")
            }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
    }

    progress("starting node 1 of \(nodeCount)")
    try await startNode(0)
    let first = "http://127.0.0.1:\(nodes[0].port)"
    let adminHeaders = ["Authorization": "Bearer \(admin)", "Content-Type": "application/json"]
    _ = try await request("POST", "\(first)/v1/projects", headers: adminHeaders, body: #"{"id": "bench"}"#)
    _ = try await request(
        "POST",
        "\(first)/v1/projects/bench/environments",
        headers: adminHeaders,
        body: #"{"id": "prod"}"#
    )
    let keyBody = try await request(
        "POST",
        "\(first)/v1/keys",
        headers: adminHeaders,
        body: #"{"name": "stream-benchmark", "role": "client", "project": "bench", "environment": "prod"}"#
    )
    guard let key = (try JSONSerialization.jsonObject(with: keyBody) as? [String: Any])?["key"] as? String else {
        throw BenchmarkError(description: "no key in \(String(decoding: keyBody, as: UTF8.self))")
    }
    let path = "/v1/projects/bench/environments/prod/stream"
    /// Publishes on the first node and returns the version it made.
    func publish(_ value: Int) async throws -> Int64 {
        let body = try await request(
            "PUT",
            "\(first)/v1/projects/bench/environments/prod/template",
            headers: adminHeaders.merging(["If-Match": "*"]) { $1 },
            body: #"{"parameters": {"kill_switch": {"defaultValue": {"value": "\#(value)"}}}}"#
        )
        guard
            let object = try JSONSerialization.jsonObject(with: body) as? [String: Any],
            // Version numbers are int64 strings in the API, as in Firebase's.
            let number = (object["version"] as? [String: Any])?["versionNumber"] as? String,
            let version = Int64(number)
        else { throw BenchmarkError(description: "no version in \(String(decoding: body, as: UTF8.self))") }
        return version
    }
    let current = try await publish(0)
    for index in 1..<nodeCount {
        progress("starting node \(index + 1) of \(nodeCount)")
        try await startNode(index)
    }
    try await Task.sleep(nanoseconds: 1_000_000_000)
    let before = nodes.map { $0.server.residentBytes }

    // One subscriber process per node, each starting quiet at the current version.
    progress("opening \(perNode) streams on each of \(nodeCount) nodes")
    let firstVersion = current + 1
    let lastVersion = current + Int64(publishes)
    var clients: [(process: Process, output: String, node: Int)] = []
    defer { for client in clients where client.process.isRunning { client.process.terminate() } }
    for (index, node) in nodes.enumerated() {
        let client = Process()
        let output = work.appendingPathComponent("client-\(index)").path
        client.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        client.arguments = [
            "subscribe", String(node.port), path, String(perNode), String(firstVersion), String(lastVersion), output,
        ]
        client.environment = ProcessInfo.processInfo.environment.merging([
            "STREAM_HEADERS": "Authorization: Bearer \(key)\r\nLast-Event-ID: \(current)\r\n"
        ]) { $1 }
        try client.run()
        clients.append((client, output, index))
    }
    let openDeadline = Date().addingTimeInterval(Double(perNode) / 20 + 60)
    while !clients.allSatisfy({ FileManager.default.fileExists(atPath: $0.output + ".open") }) {
        guard Date() < openDeadline, clients.allSatisfy({ $0.process.isRunning }) else {
            throw BenchmarkError(description: "the subscriber processes did not open their streams")
        }
        try await Task.sleep(nanoseconds: 50_000_000)
    }
    try await Task.sleep(nanoseconds: 2_000_000_000)
    let after = nodes.map { $0.server.residentBytes }
    progress("subscribed; publishing \(publishes) times on node 1")

    var started: [Int64: UInt64] = [:]
    var publishTimes: [Double] = []
    for index in 1...publishes {
        let start = monotonicNanoseconds()
        let version = try await publish(index)
        publishTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
        guard version == current + Int64(index) else {
            throw BenchmarkError(description: "publish \(index) made version \(version), not \(current + Int64(index))")
        }
        started[version] = start
        try await Task.sleep(nanoseconds: 1_000_000_000)
    }
    let waitDeadline = Date().addingTimeInterval(15)
    while clients.contains(where: { $0.process.isRunning }) && Date() < waitDeadline {
        try await Task.sleep(nanoseconds: 50_000_000)
    }
    for client in clients { _ = FileManager.default.createFile(atPath: client.output + ".stop", contents: nil) }
    for client in clients { client.process.waitUntilExit() }
    progress("published")

    // Latencies per node: node 1 made the publishes, the others heard them through PostgreSQL.
    var latencies: [[Double]] = Array(repeating: [], count: nodeCount)
    for client in clients {
        let text = try String(contentsOfFile: client.output, encoding: .utf8)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let version = fields.first.flatMap({ Int64($0) }), let start = started[version] else { continue }
            latencies[client.node] += fields.dropFirst().compactMap { UInt64($0) }.map {
                Double(Int64($0) - Int64(start)) / 1e6
            }
        }
    }
    let expected = perNode * publishes
    let all = latencies.joined().sorted()
    let cores = ProcessInfo.processInfo.activeProcessorCount
    print(
        "vane-stream-benchmark cluster: \(nodeCount) nodes on one PostgreSQL, \(perNode) subscribers each, "
            + "\(publishes) publishes on node 1, \(cores) cores, load average \(loadAverage()), \(Date().formatted(.iso8601))"
    )
    print()
    print("| node | delivered | publish → delivery p50 | p99 | max | memory per subscriber |")
    print("|---|---|---|---|---|---|")
    let ms = { (value: Double) in String(format: "%.1f ms", value) }
    for (index, values) in latencies.enumerated() {
        let sorted = values.sorted()
        let memory = Double(after[index] - before[index]) / Double(perNode) / 1024
        print(
            "| \(index + 1)\(index == 0 ? " (publishes)" : "") | \(sorted.count)/\(expected) | \(ms(percentile(sorted, 0.5))) | "
                + "\(ms(percentile(sorted, 0.99))) | \(ms(sorted.last ?? .nan)) | \(String(format: "%.1f KB", memory)) |"
        )
    }
    print(
        "| all | \(all.count)/\(expected * nodeCount) | \(ms(percentile(all, 0.5))) | **\(ms(percentile(all, 0.99)))** | "
            + "\(ms(all.last ?? .nan)) | |"
    )
    print()
    print("publish request p50: \(ms(percentile(publishTimes.sorted(), 0.5)))")
    let complete = all.count == expected * nodeCount
    if !complete { FileHandle.standardError.write(Data("some subscribers missed a publish (delivered above)\n".utf8)) }
    for node in nodes { node.server.stop() }
    nodes = []
    try? FileManager.default.removeItem(at: work)
    fflush(nil)
    _exit(complete ? 0 : 1)
}

/// The one-minute load average, for the header line.
func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").first.map(String.init)
        ?? "?"
}
