import Foundation
import TestSupport
import Testing

/// The example Hummingbird service (`vane-config-example`) as a real process against a real
/// `vane serve`: a publish changes its answer through the event stream, without a restart.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ConfigServiceExampleTests {
    static func template(newFlow: Bool) -> String {
        #"{"parameters": {"checkout_new_flow": {"defaultValue": {"value": "\#(newFlow)"}}}}"#
    }

    @Test func aPublishChangesTheServicesAnswerWithoutARestart() async throws {
        try await ServerFixture.with { fixture in
            try await fixture.publish(Self.template(newFlow: false))
            let example = try ExampleProcess(fixture: fixture)
            defer { example.stop() }
            let port = try await example.waitForPort()

            #expect(try await Self.checkout(port: port) == "old checkout; Welcome!")
            let banner = try await Self.checkout(port: port, country: "de")
            #expect(banner == "old checkout; Willkommen bei Vane!" || banner == "old checkout; Welcome!")

            try await fixture.publish(Self.template(newFlow: true))
            let published = Date()
            var answer = ""
            while Date().timeIntervalSince(published) < 10 {  // its poll is 30 s: faster is the stream
                answer = try await Self.checkout(port: port)
                if answer.hasPrefix("new checkout") { break }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(answer == "new checkout; Welcome!", "the same process answers differently, through the stream")
            #expect(example.stop() == 0, "SIGTERM shuts the service group down gracefully")
        }
    }

    /// `GET /checkout` over a plain socket; the body without its newline.
    static func checkout(port: Int, country: String = "fr") async throws -> String {
        let socket = try RawSocket(port: port)
        try socket.send(
            "GET /checkout?user=u1&country=\(country) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        let response = await socket.read(timeout: 5) { text in
            guard let split = text.range(of: "\r\n\r\n") else { return false }
            return text[split.upperBound...].hasSuffix("\n")
        }
        guard let split = response.range(of: "\r\n\r\n") else { return response }
        return String(response[split.upperBound...].dropLast())
    }
}

/// `vane-config-example` started with the fixture's server and key, on a free port.
final class ExampleProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let output: URL

    init(fixture: ServerFixture) throws {
        output = fixture.directory.appendingPathComponent("example-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = try SpawnedProcess(
            executable: CLIRunner.executable.deletingLastPathComponent().appendingPathComponent("vane-config-example"),
            arguments: [],
            environment: [
                "VANE_SERVER": fixture.server.url, "VANE_SERVER_KEY": fixture.serverKey, "HTTP_PORT": "0",
                "VANE_CACHE_FILE": fixture.directory.appendingPathComponent("example-cache.json").path,
            ],
            output: output
        )
    }

    /// The port from the service's "listening on http://127.0.0.1:PORT" line.
    func waitForPort() async throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0) })
            {
                return port
            }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw ServeProcess.StartError(
            description:
                "vane-config-example did not start: \(String(describing: try? String(contentsOf: output, encoding: .utf8)))"
        )
    }

    /// Sends SIGTERM and waits (up to 10 s) for the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }
}
