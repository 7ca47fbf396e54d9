import Foundation

/// The micro-percentile bucket of a randomization id, as every Firebase SDK computes it.
public enum PercentBucket {
    /// Micro-percents in 100 %: buckets run from 0 through 99,999,999.
    public static let microPercentsPerWhole: UInt64 = 100_000_000

    /// The bucket (0 … 99,999,999) of `randomizationId` under `seed`.
    ///
    /// SHA-256 of the UTF-8 bytes of `seed + "." + randomizationId` (just the id when the seed is
    /// empty), the 32-byte digest read as one big-endian integer, modulo 100,000,000.
    public static func microPercentile(seed: String, randomizationId: String) -> UInt64 {
        // Both read in place (`withUTF8` copies only a string that is not contiguous UTF-8), the
        // prefix `seed.` made on the stack: no allocation.
        var seed = seed
        var id = randomizationId
        return seed.withUTF8 { seedBytes in
            id.withUTF8 { idBytes in
                if seedBytes.isEmpty { return microPercentile(seedPrefix: seedBytes, randomizationId: idBytes) }
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: seedBytes.count + 1) { prefix in
                    _ = prefix.initialize(fromContentsOf: seedBytes)
                    prefix[seedBytes.count] = UInt8(ascii: ".")
                    return microPercentile(seedPrefix: UnsafeBufferPointer(prefix), randomizationId: idBytes)
                }
            }
        }
    }

    /// The bytes hashed before the id: `seed.` in UTF-8, or nothing without a seed. Compiled
    /// templates compute it once per seed.
    static func seedPrefix(_ seed: String) -> [UInt8] {
        seed.isEmpty ? [] : Array(seed.utf8) + [UInt8(ascii: ".")]
    }

    /// The bucket of an id given as UTF-8 after a precomputed ``seedPrefix(_:)``, both in place.
    @inline(__always)
    static func microPercentile(
        seedPrefix: UnsafeBufferPointer<UInt8>,
        randomizationId: UnsafeBufferPointer<UInt8>
    ) -> UInt64 {
        let digest = SHA256Digest.hash(seedPrefix, randomizationId)
        // The 32-byte digest as one big-endian integer, modulo 10^8, a word at a time (Horner's
        // rule): remainder * 2^32 + word stays below 2^59. The divisor is a literal so that the
        // compiler divides by multiplying.
        var remainder: UInt64 = 0
        for index in 0..<8 {
            remainder = (remainder << 32 + UInt64(digest[index])) % 100_000_000
        }
        return remainder
    }
}

extension PercentRange {
    /// Whether a micro-percentile falls in the range: `<=` and `>` as written, `between` as
    /// (lower, upper] like Firebase; an unknown operator contains nothing.
    public func contains(microPercentile: UInt64) -> Bool {
        // Exact: every bucket is below 2^53.
        let bucket = Double(microPercentile)
        switch self {
        case .lessOrEqual(let bound): return bucket <= bound
        case .greaterThan(let bound): return bucket > bound
        case .between(let lower, let upper): return lower < bucket && bucket <= upper
        case .unknown: return false
        }
    }
}
