import Foundation
import TestSupport
import Testing
import Vane
import VaneService

/// The SDK's two transports: `URLSessionTransport` (what apps use) and the server SDK's
/// `HTTPClientTransport` (async-http-client, what `VaneService` uses). Both must turn every way an
/// answer can go wrong into the same `TransportError`, because the SDK's retry and backoff rules
/// read them.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession, asyncHTTPClient

    func make() -> any HTTPTransport {
        switch self {
        case .urlSession: URLSessionTransport()
        case .asyncHTTPClient: HTTPClientTransport()
        }
    }

    var testDescription: String { rawValue }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct TransportTests {
    static func request(
        _ url: URL,
        path: String = "/healthz",
        timeout: TimeInterval = 1,
        limit: Int? = nil
    )
        -> TransportRequest
    {
        TransportRequest(
            method: "GET",
            url: url.appendingPathComponent(path),
            headers: ["Accept": "application/json"],
            timeout: timeout,
            maximumResponseBytes: limit
        )
    }

    @Test(arguments: TransportKind.allCases)
    func everyFaultBecomesTheSameTransportError(transport kind: TransportKind) async throws {
        try await SDKHarness.with { harness in
            let transport = kind.make()
            // A generous timeout for the plain answer: the whole suite runs beside it.
            let answer = try await transport.send(Self.request(harness.proxy.url, timeout: 15))
            #expect(answer.status == 200)
            #expect(answer.header("content-type")?.hasPrefix("application/json") == true, "\(answer.headers)")

            let faults: [(FaultProxy.Behaviour, Int?, (TransportError) -> Bool, String)] = [
                (
                    .delay(seconds: 3), nil, { if case .timedOut(1) = $0 { true } else { false } },
                    "slower than the timeout"
                ),
                (
                    .truncate(declaredLength: 500, body: "{\"state\":"), nil,
                    { if case .connectionLost = $0 { true } else { false } }, "truncated"
                ),
                (
                    .respond(status: 200, headers: [:], body: String(repeating: "x", count: 2000)), 1000,
                    { $0 == .responseTooLarge(limit: 1000) }, "longer than the limit"
                ),
                (
                    .close, nil,
                    {
                        switch $0 {
                        case .connectionLost, .cannotConnect: true
                        default: false
                        }
                    }, "closed without an answer"
                ),
            ]
            for (fault, limit, matches, name) in faults {
                harness.proxy.set(fault)
                do {
                    // 1 s only where the timeout is the point; the others get time to answer on a busy machine.
                    let timeout: TimeInterval = if case .delay = fault { 1 } else { 10 }
                    let response = try await transport.send(
                        Self.request(harness.proxy.url, timeout: timeout, limit: limit)
                    )
                    Issue.record("\(name): answered \(response.status)")
                } catch {
                    #expect((error as? TransportError).map(matches) == true, "\(name): \(error)")
                }
            }

            harness.proxy.set(.forward)
            let refused = try #require(URL(string: "http://127.0.0.1:9"))  // nothing listens on the discard port
            do {
                _ = try await transport.send(Self.request(refused))
                Issue.record("nothing listens, yet it answered")
            } catch {
                let refusal = error as? TransportError
                #expect({ if case .cannotConnect? = refusal { true } else { false } }(), "\(error)")
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aSilentStreamEndsWithATimeoutAndCloseEndsItQuietly(transport kind: TransportKind) async throws {
        try await SDKHarness.with { harness in
            let transport = kind.make()
            harness.proxy.set(.fallSilent(body: "retry: 100\n\n"))
            let silent = try await transport.openStream(Self.request(harness.proxy.url, path: "/stream", timeout: 0.5))
            #expect(silent.status == 200)
            var received = Data()
            do {
                for try await chunk in silent.body { received.append(chunk) }
                Issue.record("the silent stream ended without an error")
            } catch {
                #expect(error as? TransportError == .timedOut(seconds: 0.5), "\(error)")
            }
            #expect(String(decoding: received, as: UTF8.self) == "retry: 100\n\n")

            let closed = try await transport.openStream(Self.request(harness.proxy.url, path: "/stream", timeout: 30))
            closed.close()
            let ended = try await withDeadline(seconds: 5) {
                for try await _ in closed.body {}
                return true
            }
            #expect(ended, "close() ends the body")
        }
    }

    /// A service group shutting down cancels the download in flight: it must not wait for the
    /// request's timeout.
    @Test func cancellingASendClosesItAtOnce() async throws {
        try await SDKHarness.with { harness in
            harness.proxy.set(.delay(seconds: 20))
            let transport = HTTPClientTransport()
            let started = Date()
            let sending = Task { try await transport.send(Self.request(harness.proxy.url, timeout: 30)) }
            try await Task.sleep(nanoseconds: 300_000_000)
            sending.cancel()
            let result = await sending.result
            #expect(Date().timeIntervalSince(started) < 5, "a cancelled send returns at once")
            #expect(throws: TransportError.self) { try result.get() }
        }
    }
}
