import Crypto
import Foundation
import NIOConcurrencyHelpers

/// API key secrets: how they are made, hashed and compared.
///
/// A key is `vane_<role>_` followed by 43 base64url characters (256 random bits). Only its
/// SHA-256 is stored; the secret is shown once, when it is created.
enum APIKeySecret {
    static func generate(role: KeyRole) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return "vane_\(role.rawValue)_" + base64URL(bytes)
    }

    /// The stored form of a secret: lower-case hex SHA-256.
    static func hash(_ secret: String) -> String {
        SHA256.hash(data: Array(secret.utf8)).withUnsafeBytes { hex($0) }
    }

    /// Lower-case hex of some bytes; runs on every request, so no per-byte strings.
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index * 2] = digits[Int(byte >> 4)]
                buffer[index * 2 + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// A short public id for a key (`k_` + 12 hex characters).
    static func newIdentifier() -> String {
        var generator = SystemRandomNumberGenerator()
        return "k_" + (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A thread-safe counter.
final class LockedCounter: Sendable {
    private let value = NIOLockedValueBox<UInt64>(0)

    func next() -> UInt64 {
        value.withLockedValue { value in
            value &+= 1
            return value
        }
    }
}
