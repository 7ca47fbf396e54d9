import Foundation
import VaneCore

/// Input Vane cannot use: a missing file, malformed JSON, an invalid template. Exit code 1.
struct InputError: Error, CustomStringConvertible {
    static let exitCode: Int32 = 1

    /// What is wrong, where, and what was expected.
    var message: String

    init(_ message: String) {
        self.message = message
    }

    /// One error line per issue, each prefixed with the file it is in.
    init(file: String, issues: [ValidationIssue]) {
        self.message = issues.map { "\(file): \($0.description)" }.joined(separator: "\n")
    }

    var description: String { message }
}

/// Writes lines to standard error.
enum StandardError {
    static func write(_ text: String) {
        guard !text.isEmpty else { return }
        FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }
}

/// Writes bytes to standard output.
enum StandardOutput {
    static func write(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        // No copy: the Data borrows the bytes for the duration of the write.
        let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
        try FileHandle.standardOutput.write(contentsOf: data)
    }
}
