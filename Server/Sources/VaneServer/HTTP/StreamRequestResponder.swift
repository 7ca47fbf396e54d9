import Hummingbird
import VaneServerCore

/// Answers event-stream requests (`GET …/stream`, `GET /ofrep/v1/events`) from a task of their own,
/// and every other request as the responder it wraps does.
///
/// A connection's task runs the whole middleware chain for a request, then writes the response
/// body, which for an event stream lasts as long as the connection. Swift keeps a task's frames in
/// slabs it frees only when the task ends, so the slabs the chain grew (about 16 KB: each
/// middleware's frame holds a copy of the request and its context) stayed with every idle stream,
/// nearly what Hummingbird's bare SSE holds per connection in all (docs/PERFORMANCE.md). In a task
/// of their own the chain's frames go when the response is made; the connection's task keeps its own.
/// Other requests are answered at once, so they take no extra task.
struct StreamRequestResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == VaneRequestContext {
    /// What answers every request: ``ServerResponder`` (fetch, then the router).
    let inner: Inner

    func respond(to request: Request, context: VaneRequestContext) async throws -> Response {
        guard Self.opensStream(request) else { return try await inner.respond(to: request, context: context) }
        // Not an `async let`, whose child task is allocated among this task's frames and would
        // stay. Not cancelled with the connection either: answering takes no wait (the key is
        // checked in memory), and the stream itself ends at once if the connection's task is cancelled.
        return try await Task { try await inner.respond(to: request, context: context) }.value
    }

    /// Whether the request is for one of the event streams; a wrong guess only changes which task
    /// answers it.
    static func opensStream(_ request: Request) -> Bool {
        guard request.method == .get else { return false }
        let path = request.uri.path
        return path == "/ofrep/v1/events" || (path.hasPrefix("/v1/projects/") && path.hasSuffix("/stream"))
    }
}
