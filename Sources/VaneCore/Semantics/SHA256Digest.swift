/// SHA-256 (FIPS 180-4) of a short message given in two parts, as percent bucketing needs it.
///
/// VaneCore hashes for itself rather than through swift-crypto because VaneCore is also compiled
/// into the build plugin's tool (`vane-generate`): with swift-crypto there, every package that uses
/// the plugin compiled BoringSSL's C sources again for the host, twice per build plan (SwiftPM's
/// plugin-tool build and the main build each record the shared outputs as their own). Bucketing
/// is not a security use; `SHA256DigestTests` checks this against swift-crypto.
enum SHA256Digest {
    /// The digest of `first` followed by `second`, as eight big-endian words.
    static func hash(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> SIMD8<UInt32> {
        let length = first.count + second.count
        // The message, 0x80, zeros, and the length in bits as 8 bytes: a whole number of blocks.
        let blocks = (length + 8) / 64 + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: blocks * 64) { message in
            message.initialize(repeating: 0)
            var end = message.startIndex
            for byte in first {
                message[end] = byte
                end += 1
            }
            for byte in second {
                message[end] = byte
                end += 1
            }
            message[end] = 0x80
            let bits = UInt64(length) &* 8
            for index in 0..<8 {
                message[blocks * 64 - 1 - index] = UInt8(truncatingIfNeeded: bits >> (8 * UInt64(index)))
            }
            var state = initialState
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                for block in 0..<blocks {
                    compress(
                        &state,
                        block: UnsafeBufferPointer(rebasing: message[(block * 64)..<(block * 64 + 64)]),
                        schedule: schedule
                    )
                }
            }
            return state
        }
    }

    private static let initialState = SIMD8<UInt32>(
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19
    )

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always)
    private static func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value >> count) | (value << (32 - count))
    }

    /// One 64-byte block into the state.
    private static func compress(
        _ state: inout SIMD8<UInt32>,
        block: UnsafeBufferPointer<UInt8>,
        schedule: UnsafeMutableBufferPointer<UInt32>
    ) {
        for index in 0..<16 {
            let offset = block.startIndex + index * 4
            schedule[index] =
                UInt32(block[offset]) << 24 | UInt32(block[offset + 1]) << 16 | UInt32(block[offset + 2]) << 8
                | UInt32(block[offset + 3])
        }
        for index in 16..<64 {
            let early = schedule[index - 15]
            let late = schedule[index - 2]
            let sigma0 = rotateRight(early, 7) ^ rotateRight(early, 18) ^ (early >> 3)
            let sigma1 = rotateRight(late, 17) ^ rotateRight(late, 19) ^ (late >> 10)
            schedule[index] = schedule[index - 16] &+ sigma0 &+ schedule[index - 7] &+ sigma1
        }
        var a = state[0]
        var b = state[1]
        var c = state[2]
        var d = state[3]
        var e = state[4]
        var f = state[5]
        var g = state[6]
        var h = state[7]
        roundConstants.withUnsafeBufferPointer { constants in
            for index in 0..<64 {
                let sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
                let choice = (e & f) ^ (~e & g)
                let first = h &+ sum1 &+ choice &+ constants[index] &+ schedule[index]
                let sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let second = sum0 &+ majority
                h = g
                g = f
                f = e
                e = d &+ first
                d = c
                c = b
                b = a
                a = first &+ second
            }
        }
        state &+= SIMD8(a, b, c, d, e, f, g, h)
    }
}
