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
private let systemRead = Darwin.read
#elseif canImport(Glibc)
private let systemWrite = Glibc.write
private let systemRead = Glibc.read
#elseif canImport(Musl)
private let systemWrite = Musl.write
private let systemRead = Musl.read
#endif

/// Replaces a file's contents all at once: readers (and the next launch after a crash) see the
/// old file or the new one, never a mix or a half-written file.
///
/// The bytes go to a temporary file in the same directory, are flushed to disk, and the temporary
/// file is renamed over the target (`rename(2)` is atomic within a file system); then the
/// directory is synced so the rename itself survives a power loss. On Darwin `fsync` only hands
/// the data to the drive, whose cache may still lose it: there the file is flushed with
/// `F_BARRIERFSYNC` (its bytes reach the disk before the rename does, which is all atomicity
/// needs) and the directory with `F_FULLFSYNC` (the rename itself reaches the disk).
enum AtomicFile {
    /// Writes `bytes` to `url` atomically.
    /// - Throws: ``AtomicFileError`` naming the file and the failing step.
    static func write(_ bytes: [UInt8], to url: URL) throws(AtomicFileError) {
        let temporary = try writeTemporary(bytes, for: url)
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw AtomicFileError(url: url, step: "replace", errno: code)
        }
        syncDirectory(of: url)
    }

    /// Writes `bytes` to `url` unless a file is there already, atomically: of two processes that
    /// create it at once (an app and its extension in an App Group), one wins and the other
    /// reads the winner's.
    /// - Returns: Whether this call created the file.
    /// - Throws: ``AtomicFileError`` naming the file and the failing step.
    static func create(_ bytes: [UInt8], at url: URL) throws(AtomicFileError) -> Bool {
        let temporary = try writeTemporary(bytes, for: url)
        defer { unlink(temporary.path) }
        // link(2) fails with EEXIST instead of replacing: create-if-absent, atomic.
        guard link(temporary.path, url.path) == 0 else {
            let code = errno
            if code == EEXIST { return false }
            throw AtomicFileError(url: url, step: "create", errno: code)
        }
        syncDirectory(of: url)
        return true
    }

    /// A temporary file beside `url` holding `bytes`, on the disk.
    private static func writeTemporary(_ bytes: [UInt8], for url: URL) throws(AtomicFileError) -> URL {
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
        guard flush(descriptor, ordering: true) == 0 else {
            let code = errno
            close(descriptor)
            unlink(temporary.path)
            throw AtomicFileError(url: url, step: "flush to disk", errno: code)
        }
        close(descriptor)
        return temporary
    }

    private static func syncDirectory(of url: URL) {
        let directoryDescriptor = open(url.deletingLastPathComponent().path, O_RDONLY)
        if directoryDescriptor >= 0 {
            _ = flush(directoryDescriptor, ordering: false)
            close(directoryDescriptor)
        }
    }

    /// Flushes a descriptor to stable storage; `ordering` asks only that it reach the disk before
    /// later writes (enough for a file that is renamed afterwards).
    private static func flush(_ descriptor: Int32, ordering: Bool) -> Int32 {
        #if canImport(Darwin)
        // fsync(2) on Darwin does not flush the drive's cache; F_FULLFSYNC does, F_BARRIERFSYNC
        // orders instead (cheaper). File systems without them answer an error: fall back.
        // https://developer.apple.com/documentation/xcode/reducing-disk-writes
        if ordering, fcntl(descriptor, F_BARRIERFSYNC) == 0 { return 0 }
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }

    /// The file's bytes, or nil when it does not exist.
    /// - Throws: ``AtomicFileError`` when it is there but cannot be read: not permitted (a data
    ///   protected file before the device's first unlock answers `EPERM`), a directory, an I/O
    ///   error. The caller must not take that for "missing" and write over it.
    static func read(_ url: URL) throws(AtomicFileError) -> [UInt8]? {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw AtomicFileError(url: url, step: "read", errno: code)
        }
        defer { close(descriptor) }
        // Sized by fstat, a byte more than the file: one read takes it all, the next finds its end.
        var status = stat()
        let size = fstat(descriptor, &status) == 0 ? max(Int(clamping: status.st_size), 0) : 0
        var bytes = [UInt8](repeating: 0, count: size + 1)
        var count = 0
        while true {
            // A file that grew since fstat: room for more.
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: max(bytes.count, 4096))) }
            let result = bytes.withUnsafeMutableBytes { buffer in
                // `buffer.baseAddress` is non-nil: the array is never empty.
                systemRead(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if result == 0 {
                bytes.removeSubrange(count...)
                return bytes
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw AtomicFileError(url: url, step: "read", errno: errno)
            }
            count += result
        }
    }
}

/// A file the client could not write or read.
struct AtomicFileError: Error, Sendable, Hashable, CustomStringConvertible {
    var url: URL
    var step: String
    var errno: Int32

    /// Whether the system refused access: a data-protected file before the first unlock, or
    /// missing permissions.
    var isNotPermitted: Bool { errno == EPERM || errno == EACCES }

    var description: String {
        let advice =
            isNotPermitted
            ? "the device may be locked since its restart (data protection) or the app lacks permission"
            : "check that the storage directory is readable and writable"
        return "cannot \(step) \(url.path): \(String(cString: strerror(errno))); \(advice)"
    }
}
