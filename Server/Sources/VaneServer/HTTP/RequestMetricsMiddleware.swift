import Dispatch
import Hummingbird
import Metrics
import NIOConcurrencyHelpers
import VaneServerCore

/// Request metrics by route: what Hummingbird's `MetricsMiddleware` records, under the same labels
/// and dimensions (`/metrics` and the dashboards built on it see no difference).
///
/// - `http.server.active_requests` (a meter by method): requests being answered;
/// - `hb.requests` and `http.server.request.duration` (by route, method and status): each answered
///   request, counted and timed when its body has been written;
/// - `hb.request.errors` (by route, method and error status): each request that failed with an error.
///
/// Hummingbird's middleware keeps the request and its context until the body ends, in the closure
/// that records them. An event stream's body lasts as long as its connection, so every idle
/// subscriber kept a copy of its request (headers included), its context and the router's path
/// parameters, about 1 KB (docs/PERFORMANCE.md). This one looks the route's metrics up when the
/// response is made, and its closure keeps only them and the start time. It is also written for
/// ``VaneRequestContext`` itself: Hummingbird's runs unspecialized over its generic context on
/// every request.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = VaneRequestContext

    let metrics = RequestMetrics()

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let active = metrics.activeRequests(method: request.method)
        active.increment()
        do {
            var response = try await next(request, context)
            // The route is known once the router has answered: its path is a shared box in the context.
            let route = metrics.route(
                endpoint: context.endpointPath ?? "Unknown",
                method: request.method,
                status: response.status
            )
            // As Hummingbird's `withPostWriteClosure` (package-only) wraps a body: recorded
            // when it ends, written out or failed.
            let body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer {
                    route.requests.increment()
                    route.duration.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - started)
                    active.decrement()
                }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            let route = metrics.route(
                endpoint: context.endpointPath ?? "NotFound",
                method: request.method,
                status: status
            )
            route.requests.increment()
            route.errors.increment()
            active.decrement()
            throw error
        }
    }
}

/// The metrics of each method and route, made once each: the metrics factory's own lookup by label
/// and dimensions costs more than a dictionary's.
final class RequestMetrics: Sendable {
    /// The metrics of one route, method and status.
    struct Route: Sendable {
        let requests: Counter
        let duration: Timer
        let errors: Counter
    }

    private struct RouteID: Hashable {
        let endpoint: String
        let method: HTTPRequest.Method
        let status: HTTPResponse.Status
    }

    private let meters = NIOLockedValueBox<[HTTPRequest.Method: Meter]>([:])
    private let routes = NIOLockedValueBox<[RouteID: Route]>([:])

    /// The meter of requests being answered with `method`.
    func activeRequests(method: HTTPRequest.Method) -> Meter {
        meters.withLockedValue { meters in
            if let meter = meters[method] { return meter }
            let meter = Meter(
                label: "http.server.active_requests",
                dimensions: [("http.request.method", method.rawValue)]
            )
            meters[method] = meter
            return meter
        }
    }

    /// The counters and timer of requests to `endpoint` with `method` answered with `status`.
    func route(endpoint: String, method: HTTPRequest.Method, status: HTTPResponse.Status) -> Route {
        let id = RouteID(endpoint: endpoint, method: method, status: status)
        return routes.withLockedValue { routes in
            if let route = routes[id] { return route }
            let dimensions = [
                ("http.route", endpoint),
                ("http.request.method", method.rawValue),
                ("http.response.status_code", status.code.description),
            ]
            let route = Route(
                requests: Counter(label: "hb.requests", dimensions: dimensions),
                duration: Timer(
                    label: "http.server.request.duration",
                    dimensions: dimensions,
                    preferredDisplayUnit: .seconds
                ),
                errors: Counter(
                    label: "hb.request.errors",
                    dimensions: [
                        ("http.route", endpoint),
                        ("http.request.method", method.rawValue),
                        ("error.type", status.code.description),
                    ]
                )
            )
            routes[id] = route
            return route
        }
    }
}
