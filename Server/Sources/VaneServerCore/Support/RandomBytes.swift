/// Random bytes from the system's generator, for secrets, tokens and public ids.
package enum RandomBytes {
    /// `count` random bytes.
    package static func make(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A short public id: `prefix` + 12 lower-case hex characters (48 random bits).
    package static func identifier(prefix: String) -> String {
        prefix + make(6).withUnsafeBytes { Hex.encode($0) }
    }
}
