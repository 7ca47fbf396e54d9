import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a webhook may be sent: an `http` or `https` URL whose host resolves only to public
/// addresses, so an endpoint cannot make the server call into its own network (SSRF). Checked
/// when an endpoint is created or changed, and again before every attempt (DNS can change).
package struct WebhookDestination: Sendable {
    /// Whether loopback, private, link-local and other non-public addresses are allowed (a
    /// receiver on the same machine or network; `--webhooks-allow-private-addresses`).
    package var allowsPrivateAddresses: Bool

    package init(allowsPrivateAddresses: Bool) {
        self.allowsPrivateAddresses = allowsPrivateAddresses
    }

    /// The longest URL accepted.
    package static let maximumURLLength = 2000

    /// Why a URL is not a destination; each says what to do.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case notAURL(String)
        case unresolvable(host: String)
        case notPublic(host: String, address: String)

        package var description: String {
            switch self {
            case .notAURL(let text):
                "url must be an absolute http:// or https:// URL with a host, at most \(WebhookDestination.maximumURLLength) characters, found \"\(text.prefix(100))\""
            case .unresolvable(let host):
                "the host \"\(host.prefix(100))\" of the webhook URL does not resolve; check its spelling and DNS"
            case .notPublic(let host, let address):
                "the host \"\(host.prefix(100))\" resolves to \(address), which is not a public address; webhooks "
                    + "are not sent into the server's own network unless the server runs with --webhooks-allow-private-addresses"
            }
        }
    }

    /// The URL's host, when the URL is one a webhook may use at all (before resolving it).
    /// - Throws: ``Refusal/notAURL(_:)``.
    package static func host(of url: String) throws(Refusal) -> String {
        guard url.utf8.count <= maximumURLLength, let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = components.host, !host.isEmpty
        else { throw .notAURL(url) }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// Checks a URL: its form, and every address its host resolves to.
    /// - Throws: ``Refusal``.
    package func check(_ url: String) async throws(Refusal) {
        let host = try Self.host(of: url)
        let addresses: [String]
        do {
            addresses = try await NIOThreadPool.singleton.runIfActive { Self.resolve(host) }
        } catch {
            throw .unresolvable(host: host)
        }
        guard !addresses.isEmpty else { throw .unresolvable(host: host) }
        guard !allowsPrivateAddresses else { return }
        for address in addresses where !Self.isPublic(address) {
            throw .notPublic(host: host, address: address)
        }
    }

    /// Whether an address (text form) is a public unicast address. An IPv4-mapped IPv6 address
    /// counts as its IPv4 address; anything unreadable is not public.
    package static func isPublic(_ address: String) -> Bool {
        guard let bytes = AddressRange.bytes(of: address) else { return false }
        return !nonPublicRanges.contains { $0.contains(bytes) }
    }

    /// Loopback, private, shared, link-local, documentation, benchmarking, multicast and reserved
    /// ranges (IANA's special-purpose registries), and the IPv6 forms that embed an IPv4 address
    /// (NAT64, 6to4, Teredo, IPv4-compatible) since they can lead back into a private network.
    static let nonPublicRanges: [AddressRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16",
        "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    ].compactMap(AddressRange.init)

    /// Every address `host` resolves to, in text form (blocking: run it off the event loops).
    static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr {
                var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                // The address inside the socket address, by its fixed offset: after family and port
                // (4 bytes) in sockaddr_in, after those and the flow label (8) in sockaddr_in6, on
                // Linux and Darwin alike. (Reading `sin_addr` by name is ambiguous here: NIO's
                // CNIOLinux declares the same C structs as Glibc.)
                let raw = UnsafeRawPointer(socketAddress)
                switch Int32(entry.pointee.ai_family) {
                case AF_INET:
                    _ = inet_ntop(AF_INET, raw + 4, &buffer, socklen_t(buffer.count))
                case AF_INET6:
                    _ = inet_ntop(AF_INET6, raw + 8, &buffer, socklen_t(buffer.count))
                default: break
                }
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !text.isEmpty, !addresses.contains(text) { addresses.append(text) }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}
