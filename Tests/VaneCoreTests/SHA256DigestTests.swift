import Crypto
import Foundation
import Testing

@testable import VaneCore

/// VaneCore's own SHA-256 (percent bucketing) against swift-crypto's, at every length around the
/// block and padding boundaries and split at every point between its two parts.
@Suite struct SHA256DigestTests {
    static func reference(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    static func ours(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        let words = first.withUnsafeBufferPointer { a in
            second.withUnsafeBufferPointer { b in SHA256Digest.hash(a, b) }
        }
        return (0..<8).flatMap { index in
            (0..<4).map { byte in UInt8(truncatingIfNeeded: words[index] >> (24 - 8 * UInt32(byte))) }
        }
    }

    @Test func theKnownAnswersOfFIPS180() {
        let abc = Self.ours(Array("abc".utf8), [])
        #expect(
            abc.map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        let empty = Self.ours([], [])
        #expect(
            empty.map { String(format: "%02x", $0) }.joined()
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }

    @Test func everyLengthAndSplitMatchesSwiftCrypto() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Self.reference(message)
            for split in Set([0, length / 2, length]) {
                #expect(
                    Self.ours(Array(message[..<split]), Array(message[split...])) == expected,
                    "length \(length), split at \(split)"
                )
            }
        }
    }

    @Test func aLongMessageOfManyBlocks() {
        let message = Array(String(repeating: "vane.", count: 2_000).utf8)
        #expect(Self.ours(message, Array("tail".utf8)) == Self.reference(message + Array("tail".utf8)))
    }
}
