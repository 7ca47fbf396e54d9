import Hummingbird
import VaneCore
import VaneServerCore

/// The main port's responder: the router, except for `POST …/fetch`.
///
/// Fetch is most of what a server answers (every app polls it), and its path has one fixed shape,
/// `/v1/projects/{project}/environments/{environment}/fetch`. Matching that shape directly costs
/// less than walking Hummingbird's route trie, which compares each segment with every route's at
/// its depth (6 % of a 304's time). Fetch then runs the chain the router would run — the same
/// middleware, parameters and metrics route — so the two ways are indistinguishable. Any
/// other path or method, and any spelling of the fetch path the shape does not take (an empty
/// segment, a trailing slash), goes to the router as before.
struct ServerResponder: HTTPResponder {
    typealias Context = VaneRequestContext

    /// Everything else.
    let router: RouterResponder<VaneRequestContext>
    /// The fetch route with the middleware it is registered behind.
    let fetch: any HTTPResponder<VaneRequestContext>
    /// The route fetch is registered as, which the metrics name (`http.route`).
    let fetchRoute: String

    private static let projectParameter = Substring(EnvironmentAddress.projectParameter)
    private static let environmentParameter = Substring(EnvironmentAddress.environmentParameter)

    func respond(to request: Request, context: VaneRequestContext) async throws -> Response {
        guard request.method == .post, let (project, environment) = FetchPath.match(request.uri.path) else {
            return try await router.respond(to: request, context: context)
        }
        var context = context
        // From an array, not a dictionary literal: Hummingbird's `FlatDictionary` is not
        // specialized across modules, and its literal initializer took 3.5 % of a 304, this 1.8 %.
        context.coreContext.parameters = Parameters([
            (key: Self.projectParameter, value: project),
            (key: Self.environmentParameter, value: environment),
        ])
        context.coreContext.endpointPath.value = fetchRoute
        // As the router answers: a thrown HTTP error becomes its response here.
        do {
            return try await fetch.respond(to: request, context: context)
        } catch let error as any HTTPResponseError {
            return try error.response(from: request, context: context)
        }
    }
}

/// The fetch path's fixed shape.
enum FetchPath {
    /// The project and environment segments of `/v1/projects/{project}/environments/{environment}/fetch`
    /// as they are written (percent-encoded, as the router's parameters hold them); nil for any other
    /// path, including empty segments and a trailing slash.
    static func match(_ path: String) -> (project: Substring, environment: Substring)? {
        let utf8 = path.utf8
        guard var rest = Self.after("/v1/projects/", in: utf8[...]),
            let project = Self.segment(&rest),
            let afterEnvironments = Self.after("/environments/", in: rest)
        else { return nil }
        rest = afterEnvironments
        guard let environment = Self.segment(&rest), rest.elementsEqual("/fetch".utf8) else { return nil }
        return (Substring(project), Substring(environment))
    }

    /// What follows `prefix` in `text`, or nil when `text` does not start with it.
    private static func after(_ prefix: StaticString, in text: Substring.UTF8View) -> Substring.UTF8View? {
        let bytes = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard text.starts(with: bytes) else { return nil }
        return text.dropFirst(bytes.count)
    }

    /// A non-empty segment up to the next `/` (which stays in `text`); nil when there is none.
    private static func segment(_ text: inout Substring.UTF8View) -> Substring.UTF8View? {
        guard let slash = text.firstIndex(of: UInt8(ascii: "/")), slash != text.startIndex else { return nil }
        let segment = text[..<slash]
        text = text[slash...]
        return segment
    }
}
