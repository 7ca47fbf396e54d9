import Foundation

/// Whether a URL's host is this machine's loopback, decided from the host text alone: the name
/// `localhost`, an IPv4 literal in 127.0.0.0/8 written as four decimal numbers, or the IPv6
/// literal `::1` (any spelling, also as the IPv4-mapped `::ffff:127.x.y.z`).
///
/// A name such as `127.attacker.example` or `localhost.attacker.example` is not loopback: DNS may
/// resolve it anywhere, so plain HTTP to it could send the key across a network.
enum LoopbackHost {
    /// Whether `host` (brackets around an IPv6 literal allowed, any letter case) is loopback.
    static func contains(_ host: String) -> Bool {
        var text = Substring(host.lowercased())
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if text == "localhost" { return true }
        if let ipv4 = ipv4(text) { return ipv4[0] == 127 }
        if let ipv6 = ipv6(text) {
            if ipv6 == [0, 0, 0, 0, 0, 0, 0, 1] { return true }
            // ::ffff:a.b.c.d maps an IPv4 address.
            return ipv6[0..<5].allSatisfy { $0 == 0 } && ipv6[5] == 0xFFFF && ipv6[6] >> 8 == 127
        }
        return false
    }

    /// Four decimal numbers 0–255 separated by dots, or nil.
    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// The eight 16-bit groups of an IPv6 literal (RFC 4291 text forms: `::` once, an IPv4 tail),
    /// or nil. A zone (`%eth0`) is not accepted.
    static func ipv6(_ text: Substring) -> [UInt16]? {
        guard text.contains(":"), !text.contains("%") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt16]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, allowIPv4Tail, piece.contains(".") {
                    guard let bytes = ipv4(piece) else { return nil }
                    result.append(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
                    result.append(UInt16(bytes[2]) << 8 | UInt16(bytes[3]))
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], allowIPv4Tail: true), all.count == 8 else { return nil }
            return all
        }
        guard let head = groups(halves[0], allowIPv4Tail: false),
            let tail = groups(halves[1], allowIPv4Tail: true),
            head.count + tail.count < 8
        else { return nil }
        return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    }
}
