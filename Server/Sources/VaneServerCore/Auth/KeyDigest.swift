import Crypto

/// The SHA-256 of a key's secret, as the index holds it: four words, hashed and compared as such
/// (it was the 64-digit hex text, made and hashed on every request with a key).
package struct KeyDigest: Hashable, Sendable {
    private let first: UInt64
    private let second: UInt64
    private let third: UInt64
    private let fourth: UInt64

    /// The digest of a presented secret.
    package init(secret: String) {
        var secret = secret
        let digest = secret.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        (first, second, third, fourth) = digest.withUnsafeBytes { bytes in
            func word(_ index: Int) -> UInt64 {
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
            }
            return (word(0), word(1), word(2), word(3))
        }
    }

    /// A stored hash (``APIKeySecret/hash(_:)``); nil unless 64 lower-case hex digits.
    package init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var words: [UInt64] = [0, 0, 0, 0]
        for (index, character) in utf8.enumerated() {
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(digit)
        }
        (first, second, third, fourth) = (words[0], words[1], words[2], words[3])
    }

    /// The stored form: 64 lower-case hex digits.
    package var hex: String {
        withUnsafeBytes(of: (first.bigEndian, second.bigEndian, third.bigEndian, fourth.bigEndian)) { Hex.encode($0) }
    }
}
