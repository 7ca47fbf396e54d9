import Foundation
import HTTPTypes
import TestSupport
import Testing
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// OFREP `eventStreams` (ADR-0008): bulk responses advertise a change stream whose URL carries
/// its own short-lived credential, because providers send no headers to it.
@Suite(.timeLimit(.minutes(5))) struct OFREPEventStreamTests {
    static let bulk = "/ofrep/v1/evaluate/flags"
    static let body: JSONValue = ["context": ["targetingKey": "user-1"]]

    func advertisedURI(_ server: TestServer, key: String) async throws -> String {
        let reply = try await server.send(.post, Self.bulk, key: key, json: Self.body)
        #expect(reply.status == .ok, "\(reply.text)")
        let streams = try #require(reply.object?["eventStreams"]?.arrayValue, "\(reply.text)")
        #expect(streams.count == 1)
        let entry = try #require(streams.first?.objectValue)
        #expect(entry["type"]?.stringValue == "sse")
        #expect(entry["url"] == nil, "exactly one of url and endpoint")
        return try #require(entry["endpoint"]?.objectValue?["requestUri"]?.stringValue)
    }

    @Test func theAdvertisedStreamSignalsARefetchOnEveryPublish() async throws {
        try await TestServer.run(.sqlite) { server in
            let key = try await server.createKey(role: "client")
            let uri = try await advertisedURI(server, key: key)
            #expect(uri.hasPrefix("/ofrep/v1/events?since=1&token="), "\(uri)")
            #expect(!uri.contains(key), "never the API key itself in a URL")

            let stream = try server.openEventStream(uri)
            let opened = await stream.read(timeout: 10) { $0.contains("retry: 3000\n\n") }
            #expect(opened.hasPrefix("HTTP/1.1 200"), "\(opened)")
            #expect(opened.lowercased().contains("content-type: text/event-stream"))

            let template: JSONValue = ["parameters": ["a": ["defaultValue": ["value": "2"]]]]
            #expect(try await server.publish(template).status == .ok)
            let event = #"id: 2\#nevent: message\#ndata: {"type":"refetchEvaluation","etag":"2"}\#n\#n"#
            let text = await opened + stream.read(timeout: 10) { $0.contains(event) }
            #expect(text.contains(event), "\(text)")
            #expect(!text.contains("id: 1\n"), "the provider evaluated version 1 already: no refetch for it")

            // A provider that connects with a stale URL (or reconnects late) is told at once.
            let late = try server.openEventStream(uri)
            #expect(await late.read(timeout: 10) { $0.contains(event) }.contains(event))
            // Last-Event-ID wins when it is newer than the URL's version.
            let resumed = try server.openEventStream(uri, lastEventId: "2")
            #expect(try await server.publish(template).status == .ok)
            let next = await resumed.read(timeout: 10) { $0.contains("id: 3\n") }
            #expect(next.contains("id: 3\n") && !next.contains("id: 2\n"), "\(next)")
        }
    }

    @Test func streamURLsWithoutAValidTokenAreRefused() async throws {
        try await TestServer.run(.sqlite) { server in
            let key = try await server.createKey(role: "client")
            let uri = try await advertisedURI(server, key: key)
            let token = try #require(uri.split(separator: "token=").last.map(String.init))

            #expect(try await server.send(.get, "/ofrep/v1/events", key: nil).status == .unauthorized)
            #expect(try await server.send(.get, "/ofrep/v1/events?token=garbage", key: nil).status == .unauthorized)
            var tampered = Array(token)
            tampered[tampered.count - 2] = tampered[tampered.count - 2] == "A" ? "B" : "A"
            #expect(
                try await server.send(.get, "/ofrep/v1/events?token=\(String(tampered))", key: nil).status
                    == .unauthorized,
                "a changed signature"
            )

            // A token for another environment cannot be made from this one: the payload is signed
            // with the server's secret, and a reader of the database (which holds the key's hash)
            // does not have it.
            let (stored, hash) = try #require(server.application.keys.key(id: keyId(of: token)))
            let staging = EnvironmentKey(projectId: "demo", environmentId: "staging")
            for guess in [hash, String(hash.reversed()), "another secret that is long enough to be one"] {
                let forged = StreamToken.make(
                    keyId: stored.id,
                    environment: staging,
                    expiry: .max,
                    secret: ServerSecret(guess)
                )
                #expect(
                    try await server.send(.get, "/ofrep/v1/events?token=\(forged)", key: nil).status == .unauthorized
                )
            }

            let production = EnvironmentKey(projectId: "demo", environmentId: "production")
            let expired = StreamToken.make(
                keyId: stored.id,
                environment: production,
                expiry: 1,
                secret: server.application.secret
            )
            #expect(try await server.send(.get, "/ofrep/v1/events?token=\(expired)", key: nil).status == .unauthorized)

            let revoke = try await server.send(.delete, "/v1/keys/\(stored.id)")
            #expect(revoke.status == .ok || revoke.status == .noContent, "\(revoke.text)")
            #expect(
                try await server.send(.get, "/ofrep/v1/events?token=\(token)", key: nil).status == .unauthorized,
                "revoking the key revokes its stream URLs"
            )
        }
    }

    @Test func tokensReadBackTheEnvironmentTheyWereMadeFor() async throws {
        try await TestServer.run(.sqlite) { server in
            let key = try await server.createKey(role: "client", environment: "staging")
            let uri = try await advertisedURI(server, key: key)
            let token = try #require(uri.split(separator: "token=").last.map(String.init))
            let environment = try StreamToken.verify(
                token,
                keys: server.application.keys,
                secret: server.application.secret,
                now: 0
            )
            #expect(environment == EnvironmentKey(projectId: "demo", environmentId: "staging"))
        }
    }

    /// The key id inside a token's payload.
    func keyId(of token: String) throws -> String {
        var payload = String(token.prefix { $0 != "." })
        payload = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let data = try #require(Data(base64Encoded: payload))
        return String(String(decoding: data, as: UTF8.self).prefix { $0 != "\n" })
    }
}
