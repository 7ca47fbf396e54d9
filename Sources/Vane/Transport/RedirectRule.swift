public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Vane's rule for a redirect, for every transport that carries the SDK's key: follow one within
/// the request's origin (scheme, host and port) as it is, follow one to another origin without the
/// credential headers — and once a chain has left the origin, a hop back does not earn them again
/// — and never follow one from `https` to `http`, which would send the request's body (the user's
/// context) in clear text: the transport returns the redirect response itself.
///
/// ``URLSessionTransport`` applies it through its session's delegate (URLSession copies every
/// header to the redirected request on some platforms, FoundationNetworking among them); the
/// server SDK's transport applies it to async-http-client. A custom ``HTTPTransport`` that follows
/// redirects should ask it too.
///
/// ```swift
/// switch TransportRedirect.decision(original: first, current: previous, target: location) {
/// case .follow: send(request, to: location)
/// case .followWithoutCredentials: send(request.removingHeaders(TransportRedirect.credentialHeaders), to: location)
/// case .refuse: return redirectResponse
/// }
/// ```
public enum TransportRedirect {
    /// What to do with one redirect.
    public enum Decision: Sendable, Equatable {
        /// Follow it with the request's headers as they are.
        case follow
        /// Follow it without the headers in ``TransportRedirect/credentialHeaders``.
        case followWithoutCredentials
        /// Do not follow it; the redirect response is the answer.
        case refuse
    }

    /// The headers that carry a credential, lowercased: the SDK's `Authorization` (the server also
    /// reads `X-API-Key`), and those a session or proxy may add.
    public static let credentialHeaders: Set<String> = ["authorization", "x-api-key", "proxy-authorization", "cookie"]

    /// The decision for a redirect to `target`.
    /// - Parameters:
    ///   - original: The URL the request was first sent to.
    ///   - current: The URL of the request that was redirected (a later hop of a chain; the
    ///     original for the first).
    ///   - target: Where the redirect points, resolved against `current`.
    /// - Returns: Follow it as it is, follow it without the credential headers, or refuse it (the
    ///   redirect response is then the answer).
    public static func decision(original: URL?, current: URL?, target: URL) -> Decision {
        let isHTTPS = { (url: URL?) in url?.scheme?.lowercased() == "https" }
        if !isHTTPS(target), isHTTPS(original) || isHTTPS(current) { return .refuse }
        if let origin = Origin(original), Origin(target) == origin, Origin(current) ?? origin == origin {
            return .follow
        }
        return .followWithoutCredentials
    }

    /// Scheme, host and port, compared without regard to case; a missing port is the scheme's.
    private struct Origin: Equatable {
        var scheme: String
        var host: String
        var port: Int?

        init?(_ url: URL?) {
            guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            self.scheme = scheme
            self.host = host
            switch (url.port, scheme) {
            case (let port?, _): self.port = port
            case (nil, "https"): self.port = 443
            case (nil, "http"): self.port = 80
            default: self.port = nil
            }
        }
    }
}

/// ``TransportRedirect`` for URLSession: the request to follow instead of a proposed one.
enum RedirectRule {
    /// The request to follow instead of `proposed`, or nil to stop and return the redirect
    /// response itself.
    ///
    /// - Parameters:
    ///   - original: the URL the task was created with.
    ///   - current: the URL of the request that was redirected (a later hop of a chain).
    static func request(following proposed: URLRequest, original: URL?, current: URL?) -> URLRequest? {
        guard let target = proposed.url else { return nil }
        switch TransportRedirect.decision(original: original, current: current, target: target) {
        case .refuse:
            return nil
        case .follow:
            return proposed
        case .followWithoutCredentials:
            var stripped = proposed
            for name in (proposed.allHTTPHeaderFields ?? [:]).keys
            where TransportRedirect.credentialHeaders.contains(name.lowercased()) {
                stripped.setValue(nil, forHTTPHeaderField: name)
            }
            return stripped
        }
    }

    /// ``request(following:original:current:)`` for one of a task's redirects.
    static func request(following proposed: URLRequest, task: URLSessionTask) -> URLRequest? {
        request(following: proposed, original: task.originalRequest?.url, current: task.currentRequest?.url)
    }
}

/// Applies ``RedirectRule`` to one task of a session that is not the transport's own (a task's
/// own delegate takes the redirect decision; the session's delegate keeps everything else).
final class RedirectRuleDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    static let shared = RedirectRuleDelegate()

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(RedirectRule.request(following: request, task: task))
    }
}
