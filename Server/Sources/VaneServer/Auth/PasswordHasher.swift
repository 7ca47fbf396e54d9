import HummingbirdBcrypt
import NIOPosix

/// Hashes and checks console passwords with bcrypt (HummingbirdBcrypt), off the request threads:
/// one check takes a quarter of a second at the default cost, by design.
struct PasswordHasher: Sendable {
    /// bcrypt's cost: 2^cost rounds. 12 by default; tests use the minimum, 4.
    let cost: UInt8

    /// The fewest characters a password may have.
    static let minimumLength = 12
    /// bcrypt reads at most 72 bytes; a longer password would be silently cut, so it is refused.
    static let maximumBytes = 72

    /// A hasher with a cost between 4 and 31.
    init(cost: UInt8 = 12) {
        self.cost = min(max(cost, 4), 31)
    }

    /// The bcrypt hash of a password.
    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether a password matches a hash. With no hash (an unknown email) it checks against a
    /// hash of nothing anyone can type, so answering takes as long as for a real account and
    /// timing does not tell which emails have accounts.
    func verify(_ password: String, hash: String?) async throws -> Bool {
        let dummy = Self.unmatchableHash
        return try await NIOThreadPool.singleton.runIfActive {
            guard let hash else {
                _ = Bcrypt.verify(password, hash: dummy)
                return false
            }
            return Bcrypt.verify(password, hash: hash)
        }
    }

    /// A cost-12 hash of 32 random characters nobody knows.
    private static let unmatchableHash = Bcrypt.hash(APIKeySecret.generate(role: .admin), cost: 12)

    /// Why a new password is not acceptable, or nil when it is.
    static func problem(with password: String, email: String) -> String? {
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
