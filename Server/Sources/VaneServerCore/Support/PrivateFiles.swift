package import Foundation

/// Files only the server's user may read: the data directory (0700), the SQLite database with
/// its WAL and shared-memory files, and the first admin key (0600). Key hashes and templates are
/// nobody else's business on a shared machine.
package enum PrivateFiles {
    /// Creates `directory` (and its parents) with mode 0700 if it is missing.
    package static func createDirectory(_ directory: URL) throws {
        guard !FileManager.default.fileExists(atPath: directory.path) else { return }
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
    }

    /// Creates an empty file with mode 0600 if it is missing, so that SQLite, which gives its WAL
    /// and shared-memory files the database file's mode, creates those 0600 too.
    package static func createEmptyFile(_ path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Sets mode 0600 on each existing file: databases an earlier version created world-readable.
    package static func restrict(_ paths: [String]) throws {
        for path in paths where FileManager.default.fileExists(atPath: path) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
    }

    /// Writes `contents` to a new file with mode 0600, replacing any file there.
    package static func write(_ contents: String, to url: URL) throws {
        try createDirectory(url.deletingLastPathComponent())
        try? FileManager.default.removeItem(at: url)
        guard
            FileManager.default.createFile(
                atPath: url.path,
                contents: Data(contents.utf8),
                attributes: [.posixPermissions: 0o600]
            )
        else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
    }
}
