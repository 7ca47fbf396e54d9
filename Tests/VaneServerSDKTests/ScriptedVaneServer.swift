// The server SDK: compiled only with the `ServerSDK` trait, which brings its dependencies.
#if ServerSDK
import Foundation
import Synchronization
import Vane
import VaneCore

/// A transport that plays a Vane server for the service's client: `GET …/template/compiled`
/// answers from a queue (then a 304), `GET …/stream` opens the next stream the test scripted (then
/// fails, as an unreachable server does). Every request is recorded. The SDK package's
/// `ScriptedTransport` does the same for the app client; test code cannot cross packages without
/// becoming public API, hence this smaller one.
@available(VaneServerSDK, *)
final class ScriptedVaneServer: HTTPTransport, Sendable {
    private struct Script {
        var templates: [TransportResponse] = []
        var pendingStreams: [AsyncThrowingStream<Data, any Error>] = []
        var requests: [TransportRequest] = []
    }

    private let script = Mutex(Script())

    /// Queues a `template/compiled` answer: the template with its version, and an ETag.
    func serve(_ parameters: [String: String], version: Int64) {
        var members: [String] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            members.append(#""\#(key)": {"defaultValue": {"value": "\#(value)"}}"#)
        }
        let body =
            #"{"parameters": {\#(members.joined(separator: ", "))}, "version": {"versionNumber": "\#(version)"}}"#
        let response = TransportResponse(status: 200, headers: ["ETag": "\"v\(version)\""], body: Data(body.utf8))
        script.withLock { $0.templates.append(response) }
    }

    /// Queues a `template/compiled` answer with only a status (an overloaded server's 503, say).
    func answer(status: Int, headers: [String: String] = [:]) {
        script.withLock { $0.templates.append(TransportResponse(status: status, headers: headers)) }
    }

    /// Scripts the next event stream; returns what feeds it.
    func openNextStream() -> AsyncThrowingStream<Data, any Error>.Continuation {
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        script.withLock { $0.pendingStreams.append(body) }
        return continuation
    }

    /// The requests for one resource, in order.
    func requests(to resource: EnvironmentResource) -> [TransportRequest] {
        script.withLock { $0.requests }.filter { $0.url.path.hasSuffix("/" + resource.rawValue) }
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        script.withLock { script in
            script.requests.append(request)
            guard request.url.path.hasSuffix("/" + EnvironmentResource.compiledTemplate.rawValue) else {
                return TransportResponse(status: 404)
            }
            return script.templates.isEmpty ? TransportResponse(status: 304) : script.templates.removeFirst()
        }
    }

    func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        let body = script.withLock { script in
            script.requests.append(request)
            return script.pendingStreams.isEmpty ? nil : script.pendingStreams.removeFirst()
        }
        guard let body else { throw .cannotConnect(reason: "no stream scripted") }
        return TransportStream(status: 200, body: body) {}
    }
}

/// Waits until `condition` holds; the bound only keeps a broken build from hanging (CI runs on two
/// busy cores), it is not a timing assertion.
@available(VaneServerSDK, *)
func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while !condition(), Date() < deadline { try? await Task.sleep(nanoseconds: 5_000_000) }
    return condition()
}
#endif
