import Foundation

/// A real `vane serve` process on a free loopback port with a throw-away SQLite data directory.
///
/// Standard output and error go to files in the data directory (never a pipe nobody drains);
/// the URL comes from the banner's first line. ``stop()`` sends SIGTERM and waits for the exit,
/// killing the process if it does not exit in time.
package final class ServeProcess: @unchecked Sendable {
    package struct StartError: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) { self.description = description }
    }

    /// The server's base URL: `http://127.0.0.1:PORT`.
    package let url: String
    /// The admin key the server was started with.
    package let adminKey: String
    /// The data directory (also holds `stdout.log` and `stderr.log`).
    package let dataDirectory: URL
    package let process: SpawnedProcess

    private init(url: String, adminKey: String, dataDirectory: URL, process: SpawnedProcess) {
        self.url = url
        self.adminKey = adminKey
        self.dataDirectory = dataDirectory
        self.process = process
    }

    /// Starts `vane serve --port 0` and waits until it prints where it serves.
    package static func start(
        adminKey: String = "vane_admin_test-\(UUID().uuidString)",
        arguments: [String] = [],
        timeout: TimeInterval = 60
    ) async throws -> ServeProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            let (process, url) = try await launch(
                arguments: ["--data-dir", directory.appendingPathComponent("data").path, "--admin-key", adminKey]
                    + arguments,
                standardOutput: directory.appendingPathComponent("stdout.log"),
                standardError: directory.appendingPathComponent("stderr.log"),
                timeout: timeout
            )
            return ServeProcess(url: url, adminKey: adminKey, dataDirectory: directory, process: process)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// A new `vane serve` on the same data directory and admin key, after ``stop()``: a restart
    /// (it listens on a new port). Its output goes to `stdout-N.log` and `stderr-N.log`.
    package func restarted(timeout: TimeInterval = 60) async throws -> ServeProcess {
        let suffix = UUID().uuidString.prefix(8)
        let (process, url) = try await Self.launch(
            arguments: ["--data-dir", dataDirectory.appendingPathComponent("data").path, "--admin-key", adminKey],
            standardOutput: dataDirectory.appendingPathComponent("stdout-\(suffix).log"),
            standardError: dataDirectory.appendingPathComponent("stderr-\(suffix).log"),
            timeout: timeout
        )
        return ServeProcess(url: url, adminKey: adminKey, dataDirectory: dataDirectory, process: process)
    }

    /// Spawns `vane serve --host 127.0.0.1 --port 0` plus `arguments`, its output going to files
    /// (never a pipe nobody drains), and waits until its first line says where it serves.
    /// - Returns: The running process and its base URL, `http://127.0.0.1:PORT`.
    package static func launch(
        arguments: [String],
        standardOutput stdoutURL: URL,
        standardError stderrURL: URL,
        timeout: TimeInterval
    ) async throws -> (process: SpawnedProcess, url: String) {
        try await offCooperativePool {
            try launchBlocking(
                arguments: arguments,
                standardOutput: stdoutURL,
                standardError: stderrURL,
                timeout: timeout
            )
        }
    }

    private static func launchBlocking(
        arguments: [String],
        standardOutput stdoutURL: URL,
        standardError stderrURL: URL,
        timeout: TimeInterval
    ) throws -> (process: SpawnedProcess, url: String) {
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("VANE_") { environment[name] = nil }
        environment["VANE_LOG_LEVEL"] = "warning"
        let output = try FileHandle(forWritingTo: stdoutURL)
        let errors = try FileHandle(forWritingTo: stderrURL)
        let input = FileHandle.nullDevice
        let process = try SpawnedProcess(
            executable: CLIRunner.executable,
            arguments: ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments,
            environment: environment,
            standardInput: input.fileDescriptor,
            standardOutput: output.fileDescriptor,
            standardError: errors.fileDescriptor
        )
        try? output.close()
        try? errors.close()
        func abandon() {
            process.terminate()
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
            if text.contains("\n"), let line = text.split(separator: "\n").first {
                guard let url = Self.url(inBanner: String(line)) else {
                    abandon()
                    throw StartError(description: "vane serve printed an unexpected first line: \(line)")
                }
                return (process, url)
            }
            if !process.isRunning {
                let errors = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
                throw StartError(description: "vane serve exited with \(process.terminationStatus): \(errors)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        abandon()
        throw StartError(description: "vane serve printed nothing within \(Int(timeout)) s")
    }

    /// `http://127.0.0.1:PORT` from "Vane is serving at http://127.0.0.1:PORT (data: …)".
    package static func url(inBanner line: String) -> String? {
        let prefix = "Vane is serving at "
        guard line.hasPrefix(prefix) else { return nil }
        let rest = line.dropFirst(prefix.count)
        let url = rest.prefix { $0 != " " }
        guard let port = url.split(separator: ":").last, Int(port) != nil else { return nil }
        return String(url)
    }

    /// The client key for demo/production that the first start printed, if it printed one.
    package var demoClientKey: String? {
        let text = (try? String(contentsOf: dataDirectory.appendingPathComponent("stdout.log"), encoding: .utf8)) ?? ""
        let marker = "(shown once): "
        guard
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Client key") && $0.contains(marker) }),
            let range = line.range(of: marker)
        else { return nil }
        return String(line[range.upperBound...])
    }

    /// The server's standard error so far (its logs).
    package var log: String {
        (try? String(contentsOf: dataDirectory.appendingPathComponent("stderr.log"), encoding: .utf8)) ?? ""
    }

    /// Runs `vane` against this server with the admin key in `VANE_KEY` (unless `key` says otherwise).
    package func run(_ arguments: [String], key: String? = nil, stdin: String? = nil) async throws -> CLIRunner.Output {
        try await CLIRunner.run(
            arguments,
            stdin: stdin,
            environment: ["VANE_SERVER": url, "VANE_KEY": key ?? adminKey]
        )
    }

    /// SIGTERM, then waits up to `timeout` seconds; SIGKILL if it is still running. Returns the exit
    /// status (``SpawnedProcess`` keeps it, so a second stop returns the same).
    @discardableResult
    package func stop(timeout: TimeInterval = 15) -> Int32 {
        if process.isRunning {
            process.terminate()
            if !process.waitUntilExit(timeout: timeout) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        return process.terminationStatus
    }

    deinit {
        // Bounded like stop(): a server whose graceful shutdown waits on an open connection must
        // not hold the test run forever.
        stop(timeout: 5)
        try? FileManager.default.removeItem(at: dataDirectory)
    }
}
