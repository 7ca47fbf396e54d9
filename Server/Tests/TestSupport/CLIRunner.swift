import Foundation

/// Runs the built `vane` executable as a real process, the way users run it.
package struct CLIRunner {
    package struct Output: Sendable {
        package var status: Int32
        package var stdout: String
        package var stderr: String

        package init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// The `vane` binary built next to the tests.
    package static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["VANE_CLI"] { return URL(fileURLWithPath: path) }
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("vane")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        return packageRoot.appendingPathComponent(".build/debug/vane")
    }()

    /// The server package (`Server/`), where `swift build` puts `.build/`.
    package static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The repository: the SDK package, `Examples/` and `docs/`.
    package static let repositoryRoot = packageRoot.deletingLastPathComponent()

    package static func example(_ name: String) -> String {
        repositoryRoot.appendingPathComponent("Examples/templates").appendingPathComponent(name).path
    }

    /// Runs `vane`; with `environment`, the `VANE_*` variables are exactly those given. A process
    /// still running after `timeout` seconds is killed (SIGKILL), so a command that unexpectedly
    /// keeps running — a `vane serve` that should have refused to start — fails its test instead
    /// of holding the run.
    package static func run(
        _ arguments: [String],
        stdin: String? = nil,
        environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) async throws -> Output {
        try await offCooperativePool {
            try runBlocking(arguments, stdin: stdin, environment: environment, timeout: timeout)
        }
    }

    /// Runs another program (`swiftc`, an example app) the same way: the test process's
    /// environment with `environment` laid over it, both outputs read, killed after `timeout`.
    package static func runBlocking(
        _ arguments: [String],
        executable: URL = CLIRunner.executable,
        stdin: String? = nil,
        environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) throws -> Output {
        var variables = ProcessInfo.processInfo.environment
        if !environment.isEmpty {
            for name in variables.keys where name.hasPrefix("VANE_") { variables[name] = nil }
            variables.merge(environment) { _, new in new }
        }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        let process = try SpawnedProcess(
            executable: executable,
            arguments: arguments,
            environment: variables,
            standardInput: input.fileHandleForReading.fileDescriptor,
            standardOutput: out.fileHandleForWriting.fileDescriptor,
            standardError: err.fileHandleForWriting.fileDescriptor
        )
        // The child has its own copies: without closing these, reading would never see the end.
        try input.fileHandleForReading.close()
        try out.fileHandleForWriting.close()
        try err.fileHandleForWriting.close()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting, so a large output cannot fill a pipe and block.
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self)
        )
    }

    /// Writes a temporary file and returns its path.
    package static func temporaryFile(_ contents: String, name: String = "input.json") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }
}
