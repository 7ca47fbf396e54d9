import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer

/// Several `vane serve` nodes on one PostgreSQL database.
@Suite struct MultiNodeTests {
    /// Polls `check` until it holds, for at most about five seconds.
    func eventually(_ check: @Sendable () async throws -> Bool) async throws -> Bool {
        for _ in 0..<50 {
            if try await check() { return true }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        return false
    }

    @Test func aPublishOnOneNodeIsServedByTheOthers() async throws {
        var configuration = try await TestDatabase.postgres.configuration()
        configuration.pollIntervalMilliseconds = 200
        let shared = configuration
        try await TestServer.run(configuration: shared) { first in
            try await TestServer.run(configuration: shared) { second in
                let key = try await first.createKey(role: "client")
                let fetch: @Sendable (TestServer) async throws -> TestServer.Reply = { node in
                    try await node.send(
                        .post,
                        TestServer.demoPath + "/fetch",
                        key: key,
                        json: ["context": ["device.country": "us"]]
                    )
                }
                // A key created on the first node works on the second at once.
                #expect(try await fetch(second).object?["templateVersion"] == "1")

                let published = try await first.publish([
                    "parameters": ["banner_text": ["defaultValue": ["value": "from node one"]]]
                ])
                #expect(published.status == .ok)
                let served = try await eventually {
                    try await fetch(second).object?["entries"]?.objectValue?["banner_text"] == "from node one"
                }
                #expect(served, "the second node never served version 2")

                // A key revoked on the first node stops working on the second.
                let keys = try await first.send(.get, "/v1/keys").object?["keys"]?.arrayValue ?? []
                let id = try #require(
                    keys.first { $0.objectValue?["role"] == "client" }?.objectValue?["id"]?.stringValue
                )
                #expect(try await first.send(.delete, "/v1/keys/\(id)").status == .noContent)
                let revoked = try await eventually { try await fetch(second).status == .unauthorized }
                #expect(revoked, "the second node still accepts a revoked key")
            }
        }
    }
}
