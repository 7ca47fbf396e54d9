import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(Darwin)
private let systemWrite = Darwin.write
#elseif canImport(Glibc)
private let systemWrite = Glibc.write
#elseif canImport(Musl)
private let systemWrite = Musl.write
#endif

/// Replaces a file's contents all at once: readers (and the next launch after a crash) see the
/// old file or the new one, never a mix or a half-written file.
///
/// The bytes go to a temporary file in the same directory, are flushed to disk with `fsync`,
/// and the temporary file is renamed over the target (`rename(2)` is atomic within a file system);
/// then the directory is synced so the rename itself survives a power loss.
enum AtomicFile {
    /// Writes `bytes` to `url` atomically.
    /// - Throws: ``AtomicFileError`` naming the file and the failing step.
    static func write(_ bytes: [UInt8], to url: URL) throws(AtomicFileError) {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw AtomicFileError(url: url, step: "create a temporary file", errno: errno) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                // `buffer.baseAddress` is non-nil whenever there are bytes left to write.
                systemWrite(descriptor, buffer.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(descriptor)
                unlink(temporary.path)
                throw AtomicFileError(url: url, step: "write", errno: code)
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            close(descriptor)
            unlink(temporary.path)
            throw AtomicFileError(url: url, step: "flush to disk", errno: code)
        }
        close(descriptor)
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw AtomicFileError(url: url, step: "replace", errno: code)
        }
        let directoryDescriptor = open(directory.path, O_RDONLY)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// The file's bytes, or nil when it does not exist.
    /// - Throws: ``AtomicFileError`` when it exists but cannot be read.
    static func read(_ url: URL) throws(AtomicFileError) -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return Array(try Data(contentsOf: url))
        } catch {
            throw AtomicFileError(url: url, step: "read", errno: EIO)
        }
    }
}

/// A file the client could not write or read.
struct AtomicFileError: Error, Sendable, Hashable, CustomStringConvertible {
    var url: URL
    var step: String
    var errno: Int32

    var description: String {
        "cannot \(step) \(url.path): \(String(cString: strerror(errno))); check that the storage directory is writable"
    }
}
