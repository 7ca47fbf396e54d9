// Test helper for the SDK's crash tests: fetches, activates and sets overrides as fast as it can,
// forever, so a test can SIGKILL it in the middle of a cache write and check what it left behind.
// Its transport answers every fetch itself with a new generation of values: no server needed.
//
// Usage: vane-cache-writer <storage-directory>
import Foundation
import Vane

/// Answers each fetch with generation n+1: 2,000 keys whose values all name the generation.
struct GenerationTransport: HTTPTransport {
    let generation = LockedValue(0)

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        let number = generation.withLockedValue { value in
            value += 1
            return value
        }
        var body = #"{"state":"UPDATE","templateVersion":"\#(number)","entries":{"#
        for index in 0..<2_000 {
            if index > 0 { body += "," }
            body += #""key_\#(index)":"g\#(number)""#
        }
        body += "}}"
        return TransportResponse(status: 200, headers: ["ETag": "\"g\(number)\""], body: Data(body.utf8))
    }
}

guard CommandLine.arguments.count == 2, let server = URL(string: "http://127.0.0.1:9") else {
    FileHandle.standardError.write(Data("usage: vane-cache-writer <storage-directory>\n".utf8))
    exit(2)
}
let client = VaneClient(
    configuration: VaneClient.Configuration(
        serverURL: server,
        project: "crash",
        environment: "test",
        clientKey: "unused",
        context: ClientContext(),
        storage: .directory(URL(fileURLWithPath: CommandLine.arguments[1])),
        minimumFetchInterval: 0,
        transport: GenerationTransport()
    )
)
FileHandle.standardOutput.write(Data("ready\n".utf8))
while true {
    let result = try await client.fetch()
    if case .fetched(let version) = result {
        client.setOverride("g\(version)", forKey: "override_generation")
        client.activate()
    }
}
