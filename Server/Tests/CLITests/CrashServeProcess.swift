import Foundation
import TestSupport
import VaneCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `vane serve` process on a free loopback port, for tests that stop it the hard way.
///
/// Its output goes to files in the data directory rather than pipes, so a chatty server can never
/// block on a full pipe, and what it wrote is still there to show when a test fails.
final class CrashServeProcess: @unchecked Sendable {
    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// The server's base URL, `http://127.0.0.1:PORT`.
    let baseURL: URL
    let process: SpawnedProcess
    let logURL: URL

    private init(baseURL: URL, process: SpawnedProcess, logURL: URL) {
        self.baseURL = baseURL
        self.process = process
        self.logURL = logURL
    }

    /// Starts `vane serve --port 0` with `arguments` and waits for its banner line.
    static func start(
        arguments: [String],
        outputDirectory: URL,
        timeout: TimeInterval = 30
    ) async throws -> CrashServeProcess {
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        let stamp = UUID().uuidString.prefix(8)
        let logURL = outputDirectory.appendingPathComponent("serve-\(stamp).log")
        let (process, url) = try await ServeProcess.launch(
            arguments: arguments,
            standardOutput: outputDirectory.appendingPathComponent("serve-\(stamp).out"),
            standardError: logURL,
            timeout: timeout
        )
        guard let baseURL = URL(string: url) else {
            throw StartError(description: "vane serve announced a bad URL: \(url)")
        }
        return CrashServeProcess(baseURL: baseURL, process: process, logURL: logURL)
    }

    /// What the server wrote to standard error.
    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Whether the process still runs.
    var isRunning: Bool { process.isRunning }

    /// Kills the process with SIGKILL — no chance to clean up — and waits until it is gone.
    func kill() {
        guard process.isRunning else { return }
        _ = sigkill(process.processIdentifier)
        process.waitUntilExit()
    }

    /// Asks the process to stop (SIGTERM), as an operator would, and waits for it.
    /// A process still running after 15 s is killed, so a stuck shutdown fails the test instead
    /// of holding the run.
    func terminate() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { kill() }
    }

    // MARK: HTTP

    /// A response's status and body.
    struct Reply: Sendable {
        var status: Int
        var body: Data
        var headers: [String: String] = [:]

        /// A header, matched without regard to case.
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }

        var json: JSONValue? { try? JSONValue.parse(String(decoding: body, as: UTF8.self)) }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        configuration.httpMaximumConnectionsPerHost = 16
        return URLSession(configuration: configuration)
    }()

    /// Sends a request with `Authorization: Bearer key`.
    func send(
        _ method: String,
        _ path: String,
        key: String?,
        json: JSONValue? = nil,
        headers: [String: String] = [:]
    ) async throws -> Reply {
        guard let url = URL(string: path, relativeTo: baseURL) else {
            throw StartError(description: "bad path \(path)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.httpBody = Data(json.serialized().utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Self.session.data(for: request)
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return Reply(status: http?.statusCode ?? 0, body: data, headers: headers)
    }
}

/// `kill(2)`, named apart from ``CrashServeProcess/kill()``.
private func sigkill(_ pid: Int32) -> Int32 {
    kill(pid, SIGKILL)
}
