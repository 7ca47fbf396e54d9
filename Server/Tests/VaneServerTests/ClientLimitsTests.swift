import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// One holder of a shipped client key cannot spend the whole app's budget: rate limits per
/// client and per address under a per-key ceiling, trusted `X-Forwarded-For` only from
/// configured proxies, and caps on event streams (issue #13).
@Suite(.timeLimit(.minutes(5))) struct ClientLimitsTests {
    static let fetchPath = TestServer.demoPath + "/fetch"
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    static func context(_ id: String) -> JSONValue { ["context": ["randomizationId": .string(id)]] }

    /// Fetches until refused (at most `attempts` times); the refusal, if any.
    static func flood(
        _ server: TestServer,
        key: String,
        body: JSONValue,
        headers: HTTPFields = [:],
        attempts: Int = 20
    ) async throws -> TestServer.Reply? {
        for _ in 0..<attempts {
            let reply = try await server.send(.post, fetchPath, key: key, json: body, headers: headers)
            if reply.status == .tooManyRequests { return reply }
            #expect(reply.status == .ok, "\(reply.text)")
        }
        return nil
    }

    @Test(arguments: TestDatabase.allCases)
    func aFloodingClientIsRefusedAloneAndSpendsNothingOfTheKey(database: TestDatabase) async throws {
        // One request every 100 s per client (a burst of 1): the second is refused even on a slow
        // machine. The key may make 3 in a burst: the abuser's one allowed request spends one.
        let limits: (inout ServerConfiguration) -> Void = {
            $0.rateLimit = 0.01
            $0.addressRateLimit = 0
            $0.keyRateLimit = 1.5
        }
        try await TestServer.run(database, configure: limits) { server in
            let key = try await server.createKey(role: "client")
            let refused = try #require(try await Self.flood(server, key: key, body: Self.context("abuser")))
            #expect(refused.errorStatus == "RESOURCE_EXHAUSTED")
            #expect(refused.errorMessage?.contains("this client") == true, "\(refused.text)")
            #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Eighteen more refusals took nothing from the key: two other installs still fetch.
            for _ in 0..<18 {
                let again = try await server.send(.post, Self.fetchPath, key: key, json: Self.context("abuser"))
                #expect(again.status == .tooManyRequests)
            }
            for install in ["install-1", "install-2"] {
                let reply = try await server.send(.post, Self.fetchPath, key: key, json: Self.context(install))
                #expect(reply.status == .ok, "\(install): \(reply.text)")
            }
        }
    }

    @Test func theKeyCeilingCountsEveryClientTogether() async throws {
        let limits: (inout ServerConfiguration) -> Void = {
            $0.rateLimit = 0
            $0.addressRateLimit = 0
            $0.keyRateLimit = 0.01
        }
        try await TestServer.run(.sqlite, configure: limits) { server in
            let key = try await server.createKey(role: "client")
            var refused: TestServer.Reply?
            for index in 0..<10 where refused == nil {
                let reply = try await server.send(.post, Self.fetchPath, key: key, json: Self.context("u\(index)"))
                if reply.status == .tooManyRequests { refused = reply }
            }
            let reply = try #require(refused, "distinct clients share the key's ceiling")
            #expect(reply.errorMessage?.contains("all clients of this key") == true, "\(reply.text)")
            // Another key of the same environment has a ceiling of its own.
            let other = try await server.createKey(role: "client")
            #expect(try await server.send(.post, Self.fetchPath, key: other, json: Self.context("u0")).status == .ok)
        }
    }

    @Test func forwardedForCountsOnlyBehindATrustedProxy() async throws {
        let perAddress: (inout ServerConfiguration) -> Void = {
            $0.rateLimit = 0
            $0.addressRateLimit = 0.01
            $0.keyRateLimit = 0
        }
        // Not trusted: the header is the client's own claim, so every request is loopback's.
        try await TestServer.run(.sqlite, configure: perAddress) { server in
            let key = try await server.createKey(role: "client")
            let first = try #require(
                try await Self.flood(server, key: key, body: [:], headers: [Self.forwardedFor: "203.0.113.5"])
            )
            #expect(first.errorMessage?.contains("this address") == true, "\(first.text)")
            let spoofed = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: [:],
                headers: [Self.forwardedFor: "203.0.113.6"]
            )
            #expect(spoofed.status == .tooManyRequests, "a made-up X-Forwarded-For changes nothing")
        }
        // Behind a trusted proxy on loopback: the address the proxy appended is the client.
        let behindProxy: (inout ServerConfiguration) -> Void = {
            perAddress(&$0)
            $0.trustedProxies = ["127.0.0.0/8", "::1"]
        }
        try await TestServer.run(.sqlite, configure: behindProxy) {
            server in
            let key = try await server.createKey(role: "client")
            _ = try #require(
                try await Self.flood(server, key: key, body: [:], headers: [Self.forwardedFor: "203.0.113.5"])
            )
            let other = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: [:],
                // The client wrote the first entry itself; the proxy appended the second.
                headers: [Self.forwardedFor: "203.0.113.5, 203.0.113.6"]
            )
            #expect(other.status == .ok, "another client behind the proxy: \(other.text)")
            let forged = try await server.send(
                .post,
                Self.fetchPath,
                key: key,
                json: [:],
                headers: [Self.forwardedFor: "198.51.100.1, 203.0.113.5"]
            )
            #expect(forged.status == .tooManyRequests, "an entry left of the proxy's is not believed")
        }
    }

    @Test func ofrepSharesTheLimits() async throws {
        let slow: (inout ServerConfiguration) -> Void = { $0.rateLimit = 0.01 }
        try await TestServer.run(.sqlite, configure: slow) { server in
            let key = try await server.createKey(role: "client")
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<5 {
                let reply = try await server.send(
                    .post,
                    "/ofrep/v1/evaluate/flags",
                    key: key,
                    json: ["context": ["targetingKey": "u1"]]
                )
                statuses.append(reply.status)
                if reply.status == .tooManyRequests {
                    #expect(Int(reply.headers[.retryAfter] ?? "") ?? 0 >= 1)
                    break
                }
            }
            #expect(statuses.last == .tooManyRequests, "\(statuses)")
            let other = try await server.send(
                .post,
                "/ofrep/v1/evaluate/flags",
                key: key,
                json: ["context": ["targetingKey": "u2"]]
            )
            #expect(other.status == .ok)
        }
    }

    // MARK: - Event streams

    @Test func streamsAreCappedPerAddressAndFreedWhenTheyClose() async throws {
        // A quick heartbeat: a reset connection is noticed at the next write.
        let caps: (inout ServerConfiguration) -> Void = {
            $0.maximumStreamsPerAddress = 2
            $0.streamHeartbeatSeconds = 0.2
        }
        try await TestServer.run(.sqlite, configure: caps) { server in
            let key = try await server.createKey(role: "client")
            let path = TestServer.demoPath + "/stream"
            let first = try server.openEventStream(path, key: key)
            let second = try server.openEventStream(path, key: key)
            for stream in [first, second] {
                #expect(await stream.read(timeout: 10) { $0.contains("retry: ") }.hasPrefix("HTTP/1.1 200"))
            }
            let third = try await server.send(.get, path, key: key)
            #expect(third.status == .tooManyRequests)
            #expect(third.errorMessage?.contains("event streams open") == true, "\(third.text)")
            #expect(third.headers[.retryAfter] == String(StreamHub.Refusal.retryAfterSeconds))
            let token = try await Self.ofrepStreamToken(server, key: key)
            #expect(try await server.send(.get, "/ofrep/v1/events?token=\(token)", key: nil).status == .tooManyRequests)

            first.reset()
            var reopened: String?
            for _ in 0..<200 where reopened == nil {
                try await Task.sleep(nanoseconds: 50_000_000)
                if server.application.streamHub.openStreams < 2 {
                    let socket = try server.openEventStream(path, key: key)
                    let head = await socket.read(timeout: 10) { $0.contains("\r\n\r\n") }
                    reopened = head
                    socket.reset()
                }
            }
            #expect(reopened?.hasPrefix("HTTP/1.1 200") == true, "a closed stream frees its place")
            second.reset()
        }
    }

    @Test func streamsAreCappedPerKey() async throws {
        let oneStream: (inout ServerConfiguration) -> Void = { $0.maximumStreamsPerKey = 1 }
        try await TestServer.run(.sqlite, configure: oneStream) { server in
            let key = try await server.createKey(role: "client")
            let other = try await server.createKey(role: "client")
            let path = TestServer.demoPath + "/stream"
            let held = try server.openEventStream(path, key: key)
            #expect(await held.read(timeout: 10) { $0.contains("retry: ") }.hasPrefix("HTTP/1.1 200"))
            let refused = try await server.send(.get, path, key: key)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorMessage?.contains("this key already has 1") == true, "\(refused.text)")
            let another = try server.openEventStream(path, key: other)
            #expect(await another.read(timeout: 10) { $0.contains("retry: ") }.hasPrefix("HTTP/1.1 200"))
            held.reset()
            another.reset()
        }
    }

    /// The token in the `eventStreams` URL of a bulk evaluation.
    static func ofrepStreamToken(_ server: TestServer, key: String) async throws -> String {
        let bulk = try await server.send(.post, "/ofrep/v1/evaluate/flags", key: key, json: [:])
        let uri = try #require(
            bulk.object?["eventStreams"]?.arrayValue?.first?.objectValue?["endpoint"]?.objectValue?["requestUri"]?
                .stringValue,
            "\(bulk.text)"
        )
        return try #require(uri.split(separator: "token=").last.map(String.init))
    }
}

/// The limiter's own arithmetic, without HTTP.
@Suite struct RateLimiterTests {
    @Test func aRefusalTakesNoTokenFromAnyScope() {
        let limiter = RateLimiter(requestsPerSecond: [.client: 1, .address: 100, .key: 1.5])
        let abuser = Digest128(hashing: Array("abuser".utf8))
        #expect(limiter.acquire(keyId: "k", address: "a", body: abuser, now: 0) == nil)
        #expect(limiter.acquire(keyId: "k", address: "a", body: abuser, now: 0) == nil)
        for _ in 0..<50 {
            #expect(limiter.acquire(keyId: "k", address: "a", body: abuser, now: 0)?.scope == .client)
        }
        // The key's burst is 3: one token is left for everyone else.
        let other = Digest128(hashing: Array("other".utf8))
        #expect(limiter.acquire(keyId: "k", address: "b", body: other, now: 0) == nil)
        #expect(limiter.acquire(keyId: "k", address: "c", body: other, now: 0)?.scope == .key)
    }

    @Test func refilledBucketsAreForgotten() {
        let limiter = RateLimiter(requestsPerSecond: [.client: 1, .address: 10, .key: 1_000_000])
        let body = Digest128(hashing: [1])
        for index in 0..<3000 {
            _ = limiter.acquire(keyId: "k", address: "10.0.\(index / 256).\(index % 256)", body: body, now: 0)
        }
        let crowded = limiter.bucketCount
        #expect(crowded > 6000, "each address holds a client and an address bucket: \(crowded)")
        // A minute later the early buckets are full again, the same as new ones: the sweep that
        // 1,500 more addresses trigger drops them.
        for index in 0..<1500 {
            _ = limiter.acquire(keyId: "k", address: "10.1.\(index / 256).\(index % 256)", body: body, now: 60_000)
        }
        #expect(limiter.bucketCount <= 3001, "\(limiter.bucketCount) buckets after the sweep, \(crowded) before")
    }
}

/// Which address counts as the client's.
@Suite struct ClientAddressTests {
    @Test func rangesMatchTheirAddressesOnly() throws {
        let v4 = try #require(AddressRange("10.0.0.0/8"))
        #expect(v4.contains(try #require(AddressRange.bytes(of: "10.200.3.4"))))
        #expect(!v4.contains(try #require(AddressRange.bytes(of: "11.0.0.1"))))
        #expect(v4.contains(try #require(AddressRange.bytes(of: "::ffff:10.1.2.3"))), "IPv4-mapped IPv6")
        let v6 = try #require(AddressRange("2001:db8::/32"))
        #expect(v6.contains(try #require(AddressRange.bytes(of: "2001:db8:1::5"))))
        #expect(!v6.contains(try #require(AddressRange.bytes(of: "2001:db9::5"))))
        #expect(try #require(AddressRange("192.168.1.7")).contains(try #require(AddressRange.bytes(of: "192.168.1.7"))))
        for bad in ["", "10.0.0.0/33", "::1/129", "example.com", "10.0.0.0/-1", "10.0.0.0/8/8", "1.2.3"] {
            #expect(AddressRange(bad) == nil, "\(bad)")
        }
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        let resolver = ClientAddressResolver(trustedProxies: ["10.0.0.0/8"])
        #expect(resolver.address(peer: "10.0.0.2", forwardedFor: ["1.1.1.1, 2.2.2.2"]) == "2.2.2.2")
        #expect(resolver.address(peer: "10.0.0.2", forwardedFor: ["1.1.1.1", "2.2.2.2, 10.0.0.9"]) == "2.2.2.2")
        #expect(resolver.address(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        #expect(resolver.address(peer: "10.0.0.2", forwardedFor: ["not an address"]) == "10.0.0.2")
        #expect(resolver.address(peer: "8.8.8.8", forwardedFor: ["2.2.2.2"]) == "8.8.8.8", "an untrusted peer")
        #expect(resolver.address(peer: nil, forwardedFor: ["2.2.2.2"]) == "unknown")
        let open = ClientAddressResolver(trustedProxies: [])
        #expect(open.address(peer: "10.0.0.2", forwardedFor: ["2.2.2.2"]) == "10.0.0.2")
    }
}
