import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What ``URLSessionTransport`` does when a server redirects a request: it follows a redirect
/// within the request's origin as it is, follows one to another origin without the credential
/// headers, and never follows one from `https` to `http`.
///
/// URLSession copies every header to the redirected request on some platforms (FoundationNetworking
/// does), so without this rule a server, or anyone who can make it redirect, would receive the key.
enum RedirectRule {
    /// The headers that carry a credential: the SDK's `Authorization` (the server also reads
    /// `X-API-Key`), and those URLSession or an app's session may add.
    static let credentialHeaders: Set<String> = ["authorization", "x-api-key", "proxy-authorization", "cookie"]

    /// The request to follow instead of `proposed`, or nil to stop and return the redirect
    /// response itself.
    ///
    /// - Parameters:
    ///   - original: the URL the task was created with.
    ///   - current: the URL of the request that was redirected (a later hop of a chain).
    static func request(following proposed: URLRequest, original: URL?, current: URL?) -> URLRequest? {
        guard let target = proposed.url else { return nil }
        let isHTTPS = { (url: URL?) in url?.scheme?.lowercased() == "https" }
        // A downgrade would send the request body, the user's context, in clear text.
        if !isHTTPS(target), isHTTPS(original) || isHTTPS(current) { return nil }
        // Once a chain has left the origin, a hop back does not earn the credentials again.
        if let origin = Origin(original), Origin(target) == origin, Origin(current) ?? origin == origin {
            return proposed
        }
        var stripped = proposed
        for name in (proposed.allHTTPHeaderFields ?? [:]).keys where credentialHeaders.contains(name.lowercased()) {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        return stripped
    }

    /// ``request(following:original:current:)`` for one of a task's redirects.
    static func request(following proposed: URLRequest, task: URLSessionTask) -> URLRequest? {
        request(following: proposed, original: task.originalRequest?.url, current: task.currentRequest?.url)
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
