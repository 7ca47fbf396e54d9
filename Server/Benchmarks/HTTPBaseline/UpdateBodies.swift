import NIOConcurrencyHelpers
import NIOCore

/// The JSON bodies the floors under a full fetch answer with: as long as fetch's `UPDATE` (a size
/// the benchmark passes), each made once per size, so a floor's request only writes it.
final class UpdateBodies: Sendable {
    private let bodies = NIOLockedValueBox<[Int: ByteBuffer]>([:])

    /// A JSON string `bytes` long, or nil for a size outside 2 bytes to 1 MiB.
    func body(bytes: Int) -> ByteBuffer? {
        guard (2...(1 << 20)).contains(bytes) else { return nil }
        return bodies.withLockedValue { bodies in
            if let made = bodies[bytes] { return made }
            let made = ByteBuffer(string: "\"" + String(repeating: "x", count: bytes - 2) + "\"")
            bodies[bytes] = made
            return made
        }
    }
}
