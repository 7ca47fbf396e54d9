import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks console passwords with bcrypt (HummingbirdBcrypt), off the request threads:
/// one check takes a quarter of a second at the default cost, by design.
package struct PasswordHasher: Sendable {
    /// bcrypt's cost: 2^cost rounds. 12 by default; tests use the minimum, 4.
    package let cost: UInt8

    /// The fewest characters a password may have.
    package static let minimumLength = 12
    /// bcrypt reads at most 72 bytes; a longer password would be silently cut, so it is refused.
    package static let maximumBytes = 72

    /// A hash at this hasher's cost of 32 random characters nobody knows: what an unknown email's
    /// password is checked against, so that it costs what a wrong password costs. Made once, as
    /// the hasher is made, on the thread pool rather than on a request.
    private let unmatchableHash: Task<String, any Error>

    /// A hasher with a cost between 4 and 31.
    package init(cost: UInt8 = 12) {
        let cost = min(max(cost, 4), 31)
        self.cost = cost
        unmatchableHash = Task {
            try await NIOThreadPool.singleton.runIfActive {
                Bcrypt.hash(APIKeySecret.generate(role: .admin), cost: cost)
            }
        }
    }

    /// The bcrypt hash of a password.
    package func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether a password matches a hash. With no hash (an unknown email) it checks against
    /// ``comparedHash(for:)``'s hash of nothing anyone can type, at the same cost, so answering
    /// takes as long as for a real account and timing does not tell which emails have accounts.
    package func verify(_ password: String, hash: String?) async throws -> Bool {
        let compared = try await comparedHash(for: hash)
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: compared) }
        return hash != nil && matches
    }

    /// The hash ``verify(_:hash:)`` checks a password against: the stored one, or without one the
    /// unmatchable hash at this hasher's cost.
    package func comparedHash(for stored: String?) async throws -> String {
        if let stored { return stored }
        return try await unmatchableHash.value
    }

    /// Why a new password is not acceptable, or nil when it is.
    package static func problem(with password: String, email: String) -> String? {
        if password.count < minimumLength {
            return "a password needs at least \(minimumLength) characters; this one has \(password.count)"
        }
        if password.utf8.count > maximumBytes {
            return
                "a password can have at most \(maximumBytes) bytes (bcrypt ignores the rest); this one has \(password.utf8.count)"
        }
        if Set(password).count < 4 { return "a password needs at least 4 different characters" }
        if password.lowercased() == email.lowercased() { return "a password cannot be the email address" }
        return nil
    }
}
