#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
package import Musl
#elseif canImport(Darwin)
package import Darwin
#endif

/// An IP address or a CIDR range (`10.0.0.0/8`, `2001:db8::/32`, `127.0.0.1`): the proxies whose
/// `X-Forwarded-For` the server believes.
package struct AddressRange: Sendable, Hashable {
    /// The network's address bytes: 4 for IPv4, 16 for IPv6.
    package let network: [UInt8]
    /// How many leading bits must match.
    package let prefixLength: Int

    /// Reads `address` or `address/prefix`; nil when it is neither.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = AddressRange.bytes(of: String(parts[0])) else { return nil }
        let length: Int
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...bytes.count * 8).contains(prefix) else { return nil }
            length = prefix
        } else {
            length = bytes.count * 8
        }
        network = bytes
        prefixLength = length
    }

    /// Whether `address` (its bytes, as ``bytes(of:)`` reads them) lies in this range.
    package func contains(_ address: [UInt8]) -> Bool {
        guard address.count == network.count else { return false }
        var remaining = prefixLength
        for index in network.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if address[index] & mask != network[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// The bytes of an IPv4 or IPv6 address in text form; an IPv4-mapped IPv6 address
    /// (`::ffff:10.0.0.1`) reads as its IPv4 address. Nil for anything else.
    package static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes[12...])
        }
        return bytes
    }
}
