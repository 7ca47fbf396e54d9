package import Crypto
import Foundation

/// The server's own secret: it signs OFREP stream tokens (``StreamToken``) and the console's
/// device cookies (``DeviceCookie``).
///
/// Kept out of the database on purpose: someone who can read the database (a backup, a replica)
/// must not be able to mint tokens or device cookies. Given by the operator (`VANE_SECRET`,
/// `--secret-file`), or generated on the first start into `server-secret` in the data directory,
/// readable only by the server's user. Nodes that share one PostgreSQL database must share the
/// secret too, or a token one node handed out is refused by the next (and a device cookie
/// counts as a stranger's).
package struct ServerSecret: Sendable {
    /// The key that signs tokens.
    package let key: SymmetricKey
    /// Whether this start generated the secret (and wrote it to ``fileName``).
    package let generated: Bool

    /// The shortest secret an operator may give.
    package static let minimumLength = 32

    /// The file in the data directory that holds a generated secret.
    package static let fileName = "server-secret"

    /// A secret from its text.
    package init(_ text: String, generated: Bool = false) {
        key = SymmetricKey(data: Array(SHA256.hash(data: Array(("vane-server-secret\n" + text).utf8))))
        self.generated = generated
    }

    /// The configured secret, else the one in the data directory, else a new one written there.
    package static func load(configured: String?, dataDirectory: String) throws -> ServerSecret {
        if let configured { return ServerSecret(configured) }
        let file = URL(fileURLWithPath: dataDirectory).appendingPathComponent(fileName)
        if let data = FileManager.default.contents(atPath: file.path) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.count >= ServerSecret.minimumLength else {
                throw ServerSecretError(path: file.path, length: text.count)
            }
            return ServerSecret(text)
        }
        try PrivateFiles.createDirectory(URL(fileURLWithPath: dataDirectory))
        let text = SymmetricKey(size: .bits256).withUnsafeBytes(Hex.encode)
        try PrivateFiles.write(text + "\n", to: file)
        return ServerSecret(text, generated: true)
    }
}

/// The `server-secret` file exists but is too short to be one.
package struct ServerSecretError: Error, CustomStringConvertible {
    package var path: String
    package var length: Int

    package var description: String {
        "the server secret in \(path) is \(length) characters long; it needs at least "
            + "\(ServerSecret.minimumLength). Delete the file to have a new one generated "
            + "(OFREP stream URLs handed out before then stop working), or write a longer secret into it"
    }
}
