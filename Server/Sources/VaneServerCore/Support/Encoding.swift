import Foundation

/// Lower-case hex, as key hashes and fetch ETags write bytes.
package enum Hex {
    /// Lower-case hex of some bytes; runs on every fetch, so no per-byte strings.
    package static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            write(bytes, to: buffer, at: 0)
        }
    }

    /// Writes the hex of `bytes` into `buffer` from `start`; returns the index after the last digit.
    package static func write(
        _ bytes: UnsafeRawBufferPointer,
        to buffer: UnsafeMutableBufferPointer<UInt8>,
        at start: Int
    ) -> Int {
        var index = start
        for byte in bytes {
            buffer[index] = digit(byte >> 4)
            buffer[index + 1] = digit(byte & 0x0F)
            index += 2
        }
        return index
    }

    /// The word that 16 lower-case hex digits write, most significant first; nil unless `digits`
    /// are exactly that. What ``write(_:to:at:)`` wrote, read back: key hashes and ETag digests.
    @inline(__always)
    package static func word(_ digits: some Collection<UInt8>) -> UInt64? {
        guard digits.count == 16 else { return nil }
        var word: UInt64 = 0
        for character in digits {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            word = word << 4 | UInt64(value)
        }
        return word
    }

    /// The lower-case digit of a nibble: computed, as a table of digits was an array allocated per call.
    @inline(__always)
    private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
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
