import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`: how the tests run `vane` and `vane serve`.
///
/// Not Foundation's `Process`: on Linux its `run()` finds the highest open descriptor by
/// listing `/proc/self/fd`, copying 256 bytes per entry where the entry may be shorter
/// (swift-corelibs-foundation pull request 5472, fixed after Swift 6.3.1). With the ~1,700
/// sockets the parallel suites hold, an entry ends near an unmapped page often enough that the
/// test process died with SIGSEGV in two full runs out of two. Like Foundation, the child gets
/// its standard input, output and error and no other descriptor of the test process.
///
/// Every `waitpid` goes through this type, under one lock, so the child is reaped exactly once.
package final class SpawnedProcess: @unchecked Sendable {
    package struct SpawnError: Error, CustomStringConvertible {
        package var description: String
    }

    /// The child's process id.
    package let processIdentifier: pid_t
    private let lock = NSLock()
    /// The `waitpid` status, once the child is reaped.
    private var rawStatus: Int32?

    /// Starts `executable` with `arguments` and exactly `environment`; the three descriptors
    /// become the child's 0, 1 and 2 (the caller closes its copies when it no longer needs them).
    package init(
        executable: URL,
        arguments: [String],
        environment: [String: String],
        standardInput: Int32,
        standardOutput: Int32,
        standardError: Int32
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        try Self.closeTheRest(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own, as Foundation does: a Ctrl-C meant for the tests is not the child's.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw SpawnError(description: "posix_spawn \(executable.path) failed: \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
    }

    /// Starts `executable` with its standard output written to the file `output` (which must
    /// exist) and its standard input and error on `/dev/null`.
    package convenience init(
        executable: URL,
        arguments: [String],
        environment: [String: String],
        output: URL
    ) throws {
        let sink = try FileHandle(forWritingTo: output)
        let null = try FileHandle(forUpdating: URL(fileURLWithPath: "/dev/null"))
        defer {
            try? sink.close()
            try? null.close()
        }
        try self.init(
            executable: executable,
            arguments: arguments,
            environment: environment,
            standardInput: null.fileDescriptor,
            standardOutput: sink.fileDescriptor,
            standardError: null.fileDescriptor
        )
    }

    #if os(Linux)
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not
    /// declare: looked up once.
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }
    #endif

    /// Closes every descriptor from 3 up in the child.
    private static func closeTheRest(_ actions: inout posix_spawn_file_actions_t) throws {
        #if os(Linux)
        guard let addCloseFrom else {
            throw SpawnError(
                description: "this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)"
            )
        }
        let result = addCloseFrom(&actions, 3)
        guard result == 0 else { throw SpawnError(description: "addclosefrom failed: \(result)") }
        #endif
    }

    /// Reaps the child if it has exited (or, with `block`, once it exits); true when it has.
    private func reap(block: Bool) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if rawStatus != nil { return true }
        var status: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(processIdentifier, &status, block ? 0 : WNOHANG)
        } while result == -1 && errno == EINTR
        if result == processIdentifier {
            rawStatus = status
            return true
        }
        if result == -1 {
            // Nobody else reaps this child; a lost status reads as a failure.
            rawStatus = 0xff << 8
            return true
        }
        return false
    }

    /// Whether the child has not exited yet.
    package var isRunning: Bool { !reap(block: false) }

    /// Sends SIGTERM.
    package func terminate() { kill(processIdentifier, SIGTERM) }

    /// Waits until the child exits.
    package func waitUntilExit() { _ = reap(block: true) }

    /// Waits up to `timeout` seconds for the child to exit; whether it did.
    package func waitUntilExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !reap(block: false) {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }

    /// The exit code, or the signal that ended the child (as `Process.terminationStatus`);
    /// -1 while it runs.
    package var terminationStatus: Int32 {
        guard reap(block: false) else { return -1 }
        lock.lock()
        defer { lock.unlock() }
        let status = rawStatus ?? 0
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }
}
