package import Hummingbird
package import NIOCore

/// The request context of every Vane route: Hummingbird's core storage plus who is calling.
package struct VaneRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request storage.
    package var coreContext: CoreRequestContextStorage
    /// The authenticated caller, set by ``AuthenticationMiddleware`` (an API key) or by the
    /// console's session middleware (a person).
    package var principal: Principal?
    /// The console session of a signed-in person.
    package var consoleSession: UserSession? {
        get { session?.value }
        set { session = newValue.map(SessionBox.init) }
    }
    /// Boxed, so the context stays small: an event stream keeps its request's context while it lasts.
    private var session: SessionBox?
    /// The connection's peer, read when asked (once, for ``clientAddress``): not stored, so a
    /// context — copied through the middleware, kept by an open stream's metrics — is smaller.
    package var remoteAddress: SocketAddress? { channel.remoteAddress }
    /// The connection the request came on.
    package let channel: any Channel
    /// The client's address, set by ``ClientAddressMiddleware`` (the peer, or behind a trusted
    /// proxy the address it saw).
    package var clientAddress = "unknown"

    /// Creates a context for a request.
    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.principal = nil
        self.channel = source.channel
    }

    /// Closes the connection once the response to this request is written, rather than reading
    /// the rest of a body the server refused (Hummingbird would otherwise read it to its end to
    /// reach the next request). The response should say `Connection: close`.
    package func closeConnectionAfterResponse() {
        // Hummingbird's connection handler closes a quiescing connection after its response.
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }

    /// Bodies are read explicitly with per-route limits; this caps anything decoded implicitly.
    package var maxUploadSize: Int { ServerLimits.maximumTemplateBytes }
}

/// A console session behind one pointer (``VaneRequestContext/consoleSession``).
private final class SessionBox: Sendable {
    let value: UserSession

    init(_ value: UserSession) { self.value = value }
}
