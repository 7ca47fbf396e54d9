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
        guard utf8.count == 64, let first = Hex.word(utf8[0..<16]), let second = Hex.word(utf8[16..<32]),
            let third = Hex.word(utf8[32..<48]), let fourth = Hex.word(utf8[48..<64])
        else { return nil }
        (self.first, self.second, self.third, self.fourth) = (first, second, third, fourth)
    }

    /// The stored form: 64 lower-case hex digits.
    package var hex: String {
        withUnsafeBytes(of: (first.bigEndian, second.bigEndian, third.bigEndian, fourth.bigEndian)) { Hex.encode($0) }
    }
}
