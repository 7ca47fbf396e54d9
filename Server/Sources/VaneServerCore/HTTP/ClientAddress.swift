package import HTTPTypes
package import Hummingbird
package import NIOCore

/// Finds the address a request comes from: the connection's peer, or — when the peer is a
/// trusted reverse proxy — the address that proxy saw, from `X-Forwarded-For`.
///
/// The header is read from the right: each trusted proxy appends the address it received the
/// request from, so the rightmost entry that is not itself a trusted proxy is the client. Entries
/// further left were written by the client and are never believed. With no trusted proxies the
/// header is ignored: anyone can send it.
package struct ClientAddressResolver: Sendable {
    /// The proxies whose `X-Forwarded-For` is believed.
    package let trusted: [AddressRange]

    /// How many `X-Forwarded-For` entries are examined, from the right.
    package static let maximumHops = 16

    /// Creates a resolver; ranges that do not parse are ignored (``ServerConfiguration/validate()``
    /// refuses them first).
    package init(trustedProxies: [String]) {
        trusted = trustedProxies.compactMap(AddressRange.init)
    }

    /// The client's address, in text; "unknown" when the connection has none (tests, sockets).
    package func address(peer: String?, forwardedFor: [Substring]) -> String {
        guard let peer else { return "unknown" }
        guard isTrusted(peer) else { return peer }
        let hops = forwardedFor.lazy.flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace() }
        var nearest = peer
        for hop in hops.reversed().prefix(Self.maximumHops) {
            // An entry a trusted proxy appended is an address; anything else means the header
            // was not written by a proxy of ours, so the last trusted hop is the best answer.
            guard AddressRange.bytes(of: hop) != nil else { return nearest }
            guard isTrusted(hop) else { return hop }
            nearest = hop
        }
        return nearest
    }

    /// The address of `request`'s client, which came from `peer`. Runs on every request: the
    /// header is read only when a proxy's can be believed.
    package func address(of request: Request, peer: SocketAddress?) -> String {
        let forwarded =
            trusted.isEmpty
            ? [] : ClientAddressMiddleware.forwardedFor.map { request.headers[values: $0].map { Substring($0) } } ?? []
        return address(peer: peer?.ipAddress, forwardedFor: forwarded)
    }

    private func isTrusted(_ address: String) -> Bool {
        guard !trusted.isEmpty, let bytes = AddressRange.bytes(of: address) else { return false }
        return trusted.contains { $0.contains(bytes) }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

/// Sets ``VaneRequestContext/clientAddress`` on every request, first, so that rate limits and
/// stream caps count clients, not proxies.
package struct ClientAddressMiddleware: RouterMiddleware {
    package typealias Context = VaneRequestContext

    package let resolver: ClientAddressResolver

    package init(resolver: ClientAddressResolver) {
        self.resolver = resolver
    }

    package static let forwardedFor = HTTPField.Name("X-Forwarded-For")

    package func handle(
        _ request: Request,
        context: VaneRequestContext,
        next: (Request, VaneRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.clientAddress = resolver.address(of: request, peer: context.remoteAddress)
        return try await next(request, context)
    }
}
