import Crypto
import Foundation
import Testing

@testable import VaneCore

/// VaneCore's own SHA-256 (percent bucketing) against swift-crypto's, at every length around the
/// block and padding boundaries and split at every point between its two parts, on both paths:
/// the fastest this CPU has (its SHA instructions where it has them) and the Swift rounds alone.
@Suite struct SHA256DigestTests {
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case fastest
        case scalar

        var testDescription: String { rawValue }
    }

    static func reference(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    static func ours(_ first: [UInt8], _ second: [UInt8], _ path: Path) -> [UInt8] {
        let words = first.withUnsafeBufferPointer { a in
            second.withUnsafeBufferPointer { b in
                path == .fastest ? SHA256Digest.hash(a, b) : SHA256Digest.scalarHash(a, b)
            }
        }
        return (0..<8).flatMap { index in
            (0..<4).map { byte in UInt8(truncatingIfNeeded: words[index] >> (24 - 8 * UInt32(byte))) }
        }
    }

    @Test(arguments: Path.allCases) func theKnownAnswersOfFIPS180(path: Path) {
        let abc = Self.ours(Array("abc".utf8), [], path)
        #expect(
            abc.map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        let empty = Self.ours([], [], path)
        #expect(
            empty.map { String(format: "%02x", $0) }.joined()
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }

    @Test(arguments: Path.allCases) func everyLengthAndSplitMatchesSwiftCrypto(path: Path) {
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Self.reference(message)
            for split in Set([0, length / 2, length]) {
                #expect(
                    Self.ours(Array(message[..<split]), Array(message[split...]), path) == expected,
                    "length \(length), split at \(split)"
                )
            }
        }
    }

    @Test(arguments: Path.allCases) func aLongMessageOfManyBlocks(path: Path) {
        let message = Array(String(repeating: "vane.", count: 2_000).utf8)
        #expect(Self.ours(message, Array("tail".utf8), path) == Self.reference(message + Array("tail".utf8)))
    }

    /// The instructions are used exactly where the CPU has them: on Linux, where `/proc/cpuinfo`
    /// lists the x86 flags SHA-NI needs, and on every Apple arm64 build.
    @Test func theCPUsInstructionsAreUsedWhereItHasThem() throws {
        #if os(Linux) && arch(x86_64)
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init)
                ?? []
        )
        let hasSHANI = flags.isSuperset(of: ["sha_ni", "sse4_1", "ssse3"])
        #expect(SHA256Digest.usesHardware == hasSHANI, "flags: sha_ni, sse4_1 and ssse3 \(hasSHANI)")
        #elseif canImport(Darwin) && arch(arm64)
        #expect(SHA256Digest.usesHardware)
        #endif
    }
}
