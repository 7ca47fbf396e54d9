import Foundation

/// Lower-case hex, as key hashes and fetch ETags write bytes.
package enum Hex {
    /// Lower-case hex of some bytes; runs on every fetch, so no per-byte strings.
    package static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index * 2] = digits[Int(byte >> 4)]
                buffer[index * 2 + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }
}

/// Base64url without padding (RFC 4648 §5): text that goes into keys and URLs unescaped.
package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url text, padded or not; nil when it is not base64url.
    package static func decode(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}
