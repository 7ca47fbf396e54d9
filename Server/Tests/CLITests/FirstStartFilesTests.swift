import Foundation
import TestSupport
import Testing

/// The first start keeps its secrets out of logs and other users' reach (issue #13): the data
/// directory is 0700, the database 0600, and the new admin key goes to a 0600 file; standard
/// output (kept in logs by container platforms) says where it is, not what it is.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FirstStartFilesTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test func theAdminKeyGoesToAPrivateFileNotToTheLog() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-first-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data")
        let stdout = directory.appendingPathComponent("stdout.log")
        let (process, url) = try await ServeProcess.launch(
            arguments: ["--data-dir", data.path],
            standardOutput: stdout,
            standardError: directory.appendingPathComponent("stderr.log"),
            timeout: 60
        )
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let keyFile = data.appendingPathComponent("admin-key")
        let key = try String(contentsOf: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("vane_admin_"))
        #expect(try Self.mode(keyFile.path) == 0o600)
        #expect(try Self.mode(data.path) == 0o700)
        for file in ["vane.sqlite", "vane.sqlite-wal", "vane.sqlite-shm"] {
            let path = data.appendingPathComponent(file).path
            if FileManager.default.fileExists(atPath: path) { #expect(try Self.mode(path) == 0o600, "\(file)") }
        }
        // Wait for the banner to be complete, then check it names the file and not the key.
        var banner = ""
        for _ in 0..<100 {
            banner = (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
            if banner.contains("Client key") { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(banner.contains(keyFile.path), "\(banner)")
        #expect(!banner.contains(key), "the admin key never reaches standard output when it is not a terminal")
        // The key in the file works.
        let keys = try await CLIRunner.run(["keys", "list"], environment: ["VANE_SERVER": url, "VANE_KEY": key])
        #expect(keys.status == 0, "\(keys.stderr)")
    }

    @Test func anExistingWorldReadableDatabaseIsRestricted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-perm-\(UUID().uuidString)")
        let data = directory.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = data.appendingPathComponent("vane.sqlite").path
        #expect(FileManager.default.createFile(atPath: database, contents: nil, attributes: [.posixPermissions: 0o644]))
        let (process, _) = try await ServeProcess.launch(
            arguments: ["--data-dir", data.path, "--admin-key", "vane_admin_test-\(UUID().uuidString)"],
            standardOutput: directory.appendingPathComponent("stdout.log"),
            standardError: directory.appendingPathComponent("stderr.log"),
            timeout: 60
        )
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        #expect(try Self.mode(database) == 0o600)
    }
}
