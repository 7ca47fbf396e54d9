import Hummingbird
import VaneCore
import VaneServerCore

/// The main port's responder: the router, except for `POST …/fetch`.
///
/// Fetch is most of what a server answers (every app polls it), and its path has one fixed shape,
/// `/v1/projects/{project}/environments/{environment}/fetch`. Matching that shape directly costs
/// less than walking Hummingbird's route trie, which compares each segment with every route's at
/// its depth (6 % of a 304's time). Fetch then runs the steps the router's chain would run
/// (``FetchRequestChain``): the same middleware logic, environment and metrics route, so the two
/// ways are indistinguishable. Any other path or method, and any spelling of the fetch path the
/// shape does not take (an empty segment, a trailing slash), goes to the router as before.
struct ServerResponder: HTTPResponder {
    typealias Context = VaneRequestContext

    /// Everything else.
    let router: RouterResponder<VaneRequestContext>
    /// The fetch route with the middleware the router runs in front of it.
    let fetch: FetchRequestChain

    func respond(to request: Request, context: VaneRequestContext) async throws -> Response {
        guard request.method == .post, let environment = FetchPath.match(request.uri.path) else {
            return try await router.respond(to: request, context: context)
        }
        return try await fetch.respond(to: request, context: context, environment: environment)
    }
}

/// The fetch path's fixed shape.
enum FetchPath {
    /// The project and environment segments of `/v1/projects/{project}/environments/{environment}/fetch`
    /// as they are written (percent-encoded, as the router's parameters hold them); nil for any other
    /// path, including empty segments and a trailing slash.
    static func match(_ path: String) -> EnvironmentKey? {
        // Over the path's bytes in place: this runs on every request.
        var path = path
        return path.withUTF8 { bytes -> EnvironmentKey? in
            var rest = bytes[...]
            guard Self.skip("/v1/projects/", in: &rest), let project = Self.segment(&rest),
                Self.skip("/environments/", in: &rest), let environment = Self.segment(&rest),
                Self.skip("/fetch", in: &rest), rest.isEmpty
            else { return nil }
            return EnvironmentKey(
                projectId: String(decoding: UnsafeBufferPointer(rebasing: project), as: UTF8.self),
                environmentId: String(decoding: UnsafeBufferPointer(rebasing: environment), as: UTF8.self)
            )
        }
    }

    /// Drops `prefix` from the start of `text`; false, leaving it, when `text` does not start with it.
    private static func skip(_ prefix: StaticString, in text: inout Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let prefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard text.starts(with: prefix) else { return false }
        text = text.dropFirst(prefix.count)
        return true
    }

    /// A non-empty segment up to the next `/` (which stays in `text`); nil when there is none.
    private static func segment(
        _ text: inout Slice<UnsafeBufferPointer<UInt8>>
    ) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let slash = text.firstIndex(of: UInt8(ascii: "/")), slash != text.startIndex else { return nil }
        let segment = text[..<slash]
        text = text[slash...]
        return segment
    }
}
