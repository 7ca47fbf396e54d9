import CVaneSHA256

/// SHA-256 (FIPS 180-4) of a short message given in two parts, as percent bucketing needs it.
///
/// VaneCore hashes for itself rather than through swift-crypto because VaneCore is also compiled
/// into the build plugin's tool (`vane-generate`): with swift-crypto there, every package that uses
/// the plugin compiled BoringSSL's C sources again for the host, twice per build plan (SwiftPM's
/// plugin-tool build and the main build each record the shared outputs as their own). Bucketing
/// is not a security use; `SHA256DigestTests` checks this against swift-crypto.
///
/// The blocks are compressed with the CPU's SHA-256 instructions where it has them, through the
/// small C target `CVaneSHA256` (Swift has no intrinsics): SHA-NI on x86-64, chosen by CPUID once
/// per process, and the ARMv8 SHA2 instructions on arm64 builds that target them (every Apple
/// arm64 device). A hash then costs a fraction of the Swift rounds, which remain for every other
/// CPU: they are unrolled eight at a time, so the eight working words stay in registers without
/// being shifted along every round, and words are read with one big-endian load each. Both paths
/// share the padding, and the tests run both.
enum SHA256Digest {
    /// The digest of `first` followed by `second`, as eight big-endian words.
    static func hash(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> SIMD8<UInt32> {
        digest(first, second, hardware: true)
    }

    /// The same digest from the Swift rounds alone, as on a CPU without SHA instructions (for tests).
    static func scalarHash(
        _ first: UnsafeBufferPointer<UInt8>,
        _ second: UnsafeBufferPointer<UInt8>
    )
        -> SIMD8<UInt32>
    {
        digest(first, second, hardware: false)
    }

    /// Whether ``hash(_:_:)`` runs on the CPU's SHA-256 instructions in this process.
    static var usesHardware: Bool { cvane_sha256_has_hardware() }

    @inline(__always)
    private static func digest(
        _ first: UnsafeBufferPointer<UInt8>,
        _ second: UnsafeBufferPointer<UInt8>,
        hardware: Bool
    ) -> SIMD8<UInt32> {
        let length = first.count + second.count
        // The message, 0x80, zeros, and the length in bits as 8 bytes: a whole number of blocks.
        let blocks = (length + 8) / 64 + 1
        return withUnsafeTemporaryAllocation(byteCount: blocks * 64, alignment: 16) { message in
            message.initializeMemory(as: UInt8.self, repeating: 0)
            UnsafeMutableRawBufferPointer(rebasing: message[0..<first.count]).copyMemory(
                from: UnsafeRawBufferPointer(first)
            )
            UnsafeMutableRawBufferPointer(rebasing: message[first.count..<length]).copyMemory(
                from: UnsafeRawBufferPointer(second)
            )
            message[length] = 0x80
            message.storeBytes(
                of: (UInt64(length) &* 8).bigEndian,
                toByteOffset: blocks * 64 - 8,
                as: UInt64.self
            )
            var state = initialState
            let compressed =
                hardware
                && withUnsafeMutablePointer(to: &state) { vector in
                    vector.withMemoryRebound(to: UInt32.self, capacity: 8) { words in
                        cvane_sha256_compress_hardware(
                            words,
                            message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            blocks
                        )
                    }
                }
            if !compressed {
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                    for block in 0..<blocks {
                        compress(
                            &state,
                            block: UnsafeRawBufferPointer(rebasing: message[(block * 64)..<(block * 64 + 64)]),
                            schedule: schedule
                        )
                    }
                }
            }
            return state
        }
    }

    /// A computed literal, not a stored global: no lazy initialization check on every hash.
    private static var initialState: SIMD8<UInt32> {
        [0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19]
    }

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

    /// One round: `d` and `h` are the two words it changes; the caller rotates the names.
    @inline(__always)
    private static func round(
        _ a: UInt32,
        _ b: UInt32,
        _ c: UInt32,
        _ d: inout UInt32,
        _ e: UInt32,
        _ f: UInt32,
        _ g: UInt32,
        _ h: inout UInt32,
        _ constantPlusWord: UInt32
    ) {
        let sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
        let choice = g ^ (e & (f ^ g))
        let first = h &+ sum1 &+ choice &+ constantPlusWord
        let sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
        let majority = (a & b) | (c & (a | b))
        d = d &+ first
        h = first &+ sum0 &+ majority
    }

    /// One 64-byte block into the state.
    private static func compress(
        _ state: inout SIMD8<UInt32>,
        block: UnsafeRawBufferPointer,
        schedule: UnsafeMutableBufferPointer<UInt32>
    ) {
        for index in 0..<16 {
            schedule[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
        }
        for index in 16..<64 {
            let early = schedule[index - 15]
            let late = schedule[index - 2]
            let sigma0 = rotateRight(early, 7) ^ rotateRight(early, 18) ^ (early >> 3)
            let sigma1 = rotateRight(late, 17) ^ rotateRight(late, 19) ^ (late >> 10)
            schedule[index] = schedule[index - 16] &+ sigma0 &+ schedule[index - 7] &+ sigma1
        }
        var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        roundConstants.withUnsafeBufferPointer { constants in
            var index = 0
            while index < 64 {
                round(a, b, c, &d, e, f, g, &h, constants[index] &+ schedule[index])
                round(h, a, b, &c, d, e, f, &g, constants[index + 1] &+ schedule[index + 1])
                round(g, h, a, &b, c, d, e, &f, constants[index + 2] &+ schedule[index + 2])
                round(f, g, h, &a, b, c, d, &e, constants[index + 3] &+ schedule[index + 3])
                round(e, f, g, &h, a, b, c, &d, constants[index + 4] &+ schedule[index + 4])
                round(d, e, f, &g, h, a, b, &c, constants[index + 5] &+ schedule[index + 5])
                round(c, d, e, &f, g, h, a, &b, constants[index + 6] &+ schedule[index + 6])
                round(b, c, d, &e, f, g, h, &a, constants[index + 7] &+ schedule[index + 7])
                index += 8
            }
        }
        state &+= SIMD8(a, b, c, d, e, f, g, h)
    }
}
