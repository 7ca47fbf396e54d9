package import Crypto
import Foundation

/// The ETag of one context's fetch result: `"<values>.<proof>"`, or `"<values>.<proof>.<until>"`
/// when a `dateTime` rule can change the result later.
///
/// - `values` (32 hex digits) names the entries and metadata this context gets. It alone decides
///   whether a client's values are current: after a publish that changes nothing for this user,
///   the user still gets 304 (or `NO_CHANGE`), with a fresh ETag.
/// - `proof` (32 hex digits) hashes the environment, the template version (its number and its
///   content), `values`, `until` and the digest of the exact request body. A request that presents
///   it with the same body while the same version is served, before `until`, must get the same result, so the server answers 304 without parsing
///   the body or evaluating anything. That is the common poll: nothing was published since the
///   device last fetched.
/// - `until` (milliseconds since 1970) is the first moment a `dateTime` rule could change the
///   result (``CompiledTemplate/resultUnchangedUntil(for:evaluatedAt:)``).
///
/// The proof needs no secret: a client that forges one can only mislead itself about its own
/// values. Every node computes the same ETag, so nodes behind a load balancer agree.
package struct ResultETag: Sendable {
    package var values: Digest128
    package var proof: Digest128?
    package var until: Int64?

    /// The ETag of a result just evaluated for this request body.
    /// - Parameter scope: What the proof binds besides the request: the served version's
    ///   ``ServedTemplate/proofScope``.
    /// - Parameter body: ``Digest128/init(hashing:)`` of the request body, computed once per
    ///   request however many tags it presents.
    package init(values: Digest128, scope: [UInt8], until: Int64?, body: Digest128) {
        self.values = values
        self.until = until
        self.proof = Self.proof(values: values, scope: scope, until: until, body: body)
    }

    /// Reads an ETag without quotes; nil for one this server did not write. A bare `values`
    /// (the form before proofs existed) is read without a proof.
    package init?(_ text: Substring) {
        let dot = UInt8(ascii: ".")
        let utf8 = text.utf8
        let valuesEnd = utf8.firstIndex(of: dot) ?? utf8.endIndex
        guard let values = Digest128(hex: utf8[..<valuesEnd]) else { return nil }
        self.values = values
        proof = nil
        until = nil
        guard valuesEnd < utf8.endIndex else { return }
        let rest = utf8[utf8.index(after: valuesEnd)...]
        let proofEnd = rest.firstIndex(of: dot) ?? rest.endIndex
        guard let proof = Digest128(hex: rest[..<proofEnd]) else { return nil }
        self.proof = proof
        guard proofEnd < rest.endIndex else { return }
        guard let until = Int64(Substring(rest[rest.index(after: proofEnd)...])) else { return nil }
        self.until = until
    }

    /// The header value, quoted.
    package var headerValue: String {
        // Every fetch answer has one: one string written in place, not joined from five.
        let untilText = until.map(String.init)
        let capacity = 2 + 32 + (proof == nil ? 0 : 33) + (untilText.map { $0.utf8.count + 1 } ?? 0)
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            buffer[0] = UInt8(ascii: "\"")
            var index = values.writeHex(to: buffer, at: 1)
            if let proof {
                buffer[index] = UInt8(ascii: ".")
                index = proof.writeHex(to: buffer, at: index + 1)
            }
            if let untilText {
                buffer[index] = UInt8(ascii: ".")
                index += 1
                for byte in untilText.utf8 {
                    buffer[index] = byte
                    index += 1
                }
            }
            buffer[index] = UInt8(ascii: "\"")
            return index + 1
        }
    }

    /// Whether this ETag, presented with `body`, names the result of the version whose proof scope
    /// is `scope`, at `nowMilliseconds`.
    package func isCurrent(scope: [UInt8], body: Digest128, nowMilliseconds: Int64) -> Bool {
        guard let proof else { return false }
        if let until, nowMilliseconds >= until { return false }
        return proof == Self.proof(values: values, scope: scope, until: until, body: body)
    }

    private static func proof(values: Digest128, scope: [UInt8], until: Int64?, body: Digest128) -> Digest128 {
        var hasher = SHA256()
        scope.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: (until ?? -1).littleEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: values.high.littleEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: values.low.littleEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: body.high.littleEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: body.low.littleEndian) { hasher.update(bufferPointer: $0) }
        return Digest128(hasher.finalize())
    }
}

/// 128 bits of a SHA-256 digest, or a wrapping sum of such: a result's ``ResultETag/values`` is
/// the sum of the digests of the entries it sends, so naming a result costs two additions per
/// parameter and does not depend on their order.
package struct Digest128: Sendable, Hashable {
    package var high: UInt64
    package var low: UInt64

    package static let zero = Digest128(high: 0, low: 0)

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The first 128 bits of a SHA-256 digest.
    package init(_ digest: SHA256.Digest) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        digest.withUnsafeBytes { bytes in
            for index in 0..<8 {
                high = high << 8 | UInt64(bytes[index])
                low = low << 8 | UInt64(bytes[index + 8])
            }
        }
        self.init(high: high, low: low)
    }

    /// The digest of some bytes.
    package init(hashing bytes: [UInt8]) {
        self.init(SHA256.hash(data: bytes))
    }

    /// Reads 32 hex digits.
    package init?(hex: Substring.UTF8View) {
        guard hex.count == 32 else { return nil }
        let middle = hex.index(hex.startIndex, offsetBy: 16)
        guard let high = Hex.word(hex[..<middle]), let low = Hex.word(hex[middle...]) else { return nil }
        self.init(high: high, low: low)
    }

    /// Adds another digest, wrapping.
    package mutating func add(_ other: Digest128) {
        high &+= other.high
        low &+= other.low
    }

    /// 32 lower-case hex digits.
    package var hex: String {
        String(unsafeUninitializedCapacity: 32) { writeHex(to: $0, at: 0) }
    }

    /// Writes the 32 hex digits into `buffer` from `start`; returns the index after them.
    package func writeHex(to buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Hex.write($0, to: buffer, at: start) }
    }
}
