/// SplitMix64: a small, fast, seeded generator, the same sequence on every platform (the
/// standard library's generator is not seedable).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform number in [0, 1) from the top 53 bits (the same in any language that follows
    /// this recipe, so test fixtures written elsewhere can regenerate the sequence).
    package mutating func uniform() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}
