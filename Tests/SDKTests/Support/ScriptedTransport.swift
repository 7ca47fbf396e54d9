import Foundation
import VaneCore

@testable import Vane

/// What the scripted transport does with one request.
enum ScriptedAnswer: Sendable {
    /// Answers with this response.
    case respond(TransportResponse)
    /// No complete response: the error a real transport throws (offline, timed out, cut off).
    case fail(TransportError)
    /// Waits until the gate opens, then answers: a slow server, without real time passing.
    indirect case held(ScriptGate, ScriptedAnswer)
    /// Opens an event stream the test feeds (for `openStream`; `send` fails with it).
    case stream(ScriptedStream, status: Int)

    /// A 200 `UPDATE` fetch answer.
    static func update(
        version: Int64,
        _ entries: [String: String],
        metadata: [String: KeyMetadata] = [:],
        etag: String? = nil
    ) -> ScriptedAnswer {
        let body = FetchResponseBody(state: .update, entries: entries, metadata: metadata, templateVersion: version)
        return .status(200, headers: etag.map { ["ETag": $0] } ?? [:], body: body.json().serialized())
    }

    /// A 304 with the server's current ETag.
    static func notModified(etag: String) -> ScriptedAnswer {
        .status(304, headers: ["ETag": etag])
    }

    /// Any status, headers and body text.
    static func status(_ status: Int, headers: [String: String] = [:], body: String = "") -> ScriptedAnswer {
        .respond(TransportResponse(status: status, headers: headers, body: Data(body.utf8)))
    }

    /// An open event stream (status 200).
    static func stream(_ stream: ScriptedStream) -> ScriptedAnswer { .stream(stream, status: 200) }
}

/// A transport that answers each request from a script, per resource of the environment
/// (`fetch`, `events`, `stream`, `template/compiled`): first the answers queued for it, in order,
/// then its standing answer. It records every request. A request nothing was scripted for fails
/// with `cannotConnect` naming it, so a test sees what it did not expect.
final class ScriptedTransport: HTTPTransport, Sendable {
    private struct Script {
        var queued: [EnvironmentResource: [ScriptedAnswer]] = [:]
        var standing: [EnvironmentResource: ScriptedAnswer] = [:]
        var everything: ScriptedAnswer?
        var requests: [TransportRequest] = []
    }

    private let script = LockedValue(Script())

    /// A transport with nothing scripted yet.
    init() {}

    /// A transport that answers every request with `response`.
    init(_ response: TransportResponse) {
        script.withLockedValue { $0.everything = .respond(response) }
    }

    /// Queues answers for the next requests to `resource`, in order.
    func enqueue(_ resource: EnvironmentResource, _ answers: ScriptedAnswer...) {
        script.withLockedValue { $0.queued[resource, default: []].append(contentsOf: answers) }
    }

    /// The answer to requests to `resource` once its queue is empty.
    func always(_ resource: EnvironmentResource, _ answer: ScriptedAnswer) {
        script.withLockedValue { $0.standing[resource] = answer }
    }

    /// Every request, in the order they were sent.
    var requests: [TransportRequest] { script.withLockedValue { $0.requests } }

    /// The requests to one resource, in order.
    func requests(to resource: EnvironmentResource) -> [TransportRequest] {
        requests.filter { Self.resource(of: $0) == resource }
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        switch await answer(request) {
        case .respond(let response): return response
        case .fail(let error): throw error
        case .stream: throw .connectionLost(reason: "scripted a stream for a plain request to \(request.url.path)")
        case .held: preconditionFailure("answer(_:) waits out held answers")
        }
    }

    func openStream(_ request: TransportRequest) async throws(TransportError) -> TransportStream {
        switch await answer(request) {
        case .stream(let stream, let status):
            return TransportStream(status: status, body: stream.body, close: { stream.close() })
        case .respond(let response):
            // A refusal: a stream that ends at once.
            return TransportStream(status: response.status, headers: response.headers, body: .init { $0.finish() }) {}
        case .fail(let error): throw error
        case .held: preconditionFailure("answer(_:) waits out held answers")
        }
    }

    private func answer(_ request: TransportRequest) async -> ScriptedAnswer {
        let resource = Self.resource(of: request)
        var answer = script.withLockedValue { script -> ScriptedAnswer in
            script.requests.append(request)
            if let resource, var queue = script.queued[resource], !queue.isEmpty {
                let next = queue.removeFirst()
                script.queued[resource] = queue
                return next
            }
            if let resource, let standing = script.standing[resource] { return standing }
            return script.everything
                ?? .fail(.cannotConnect(reason: "nothing scripted for \(request.method) \(request.url.path)"))
        }
        while case .held(let gate, let then) = answer {
            await gate.wait()
            answer = then
        }
        return answer
    }

    /// The environment resource a request is for, from its path's end.
    static func resource(of request: TransportRequest) -> EnvironmentResource? {
        EnvironmentResource.allCases.first { request.url.path.hasSuffix("/" + $0.rawValue) }
    }
}

/// Holds answers until the test opens it.
final class ScriptGate: Sendable {
    private struct State {
        var open = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedValue(State())

    /// How many answers wait for the gate now.
    var waitingCount: Int { state.withLockedValue { $0.waiting.count } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLockedValue { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    /// Lets every held answer go, and every later one at once.
    func open() {
        let waiting = state.withLockedValue { state in
            state.open = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// An event stream's body that the test writes: events, a `retry:`, the end, a failure.
final class ScriptedStream: Sendable {
    let body: AsyncThrowingStream<Data, any Error>
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    private let closed = LockedValue(false)

    init() {
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        self.body = body
        self.continuation = continuation
        continuation.onTermination = { [closed] _ in closed.withLockedValue { $0 = true } }
    }

    /// Whether the stream ended: closed by the client, cancelled, or finished by the test.
    var isClosed: Bool { closed.withLockedValue { $0 } }

    /// Sends raw event-stream text.
    func send(_ text: String) { continuation.yield(Data(text.utf8)) }

    /// Announces a version, as `vane serve` does after a publish.
    func announce(_ version: Int64) { send(VersionEvent(templateVersion: version).text) }

    /// Ends the stream: cleanly, or with a transport failure.
    func finish(throwing error: TransportError? = nil) { continuation.finish(throwing: error) }

    /// What the client's `close` does.
    func close() { continuation.finish() }
}
