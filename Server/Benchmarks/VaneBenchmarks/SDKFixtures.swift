import Foundation
import Vane

/// Answers every fetch with the same values, in-process: the SDK benchmarks need no server.
struct FixedFetchTransport: HTTPTransport {
    let body: Data

    init(entries: [String: String]) {
        var object = JSONObject()
        for key in entries.keys.sorted() { object[key] = entries[key].map { .string($0) } }
        let response: JSONValue = ["state": "UPDATE", "templateVersion": "1", "entries": .object(object)]
        body = Data(response.serializedData())
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        TransportResponse(status: 200, headers: ["ETag": "\"bench\""], body: body)
    }
}

enum SDKFixtures {
    /// A client configuration that stores its files in `directory`.
    static func configuration(directory: URL, entries: [String: String]) -> VaneClient.Configuration {
        VaneClient.Configuration(
            serverURL: URL(fileURLWithPath: "/"),
            project: "bench",
            environment: "test",
            clientKey: "unused",
            context: ClientContext(),
            storage: .directory(directory),
            minimumFetchInterval: 0,
            transport: FixedFetchTransport(entries: entries)
        )
    }

    /// Fetches and activates once, so the directory holds a cache of `entries`.
    static func writeCache(directory: URL, entries: [String: String]) async throws {
        let client = VaneClient(configuration: configuration(directory: directory, entries: entries))
        try await client.fetchAndActivate()
    }
}
