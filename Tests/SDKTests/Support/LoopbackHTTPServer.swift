import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 for transport tests, on POSIX sockets (the root package
/// has no NIO). Each connection gets a thread, one request, one scripted reply, then a close.
final class LoopbackHTTPServer: @unchecked Sendable {
    /// A request head as the server read it; header names are lowercased.
    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
    }

    /// What the server answers.
    enum Reply: Sendable {
        /// A complete response with a `Content-Length`.
        case respond(status: Int, headers: [String: String] = [:], body: String = "")
        /// `head` (status line and header lines, without the blank line), then `bodyBytes` bytes
        /// in 64 KiB writes until the client stops reading, then a close. A millisecond between
        /// writes (about 64 MB/s, a fast network) leaves the client time to act on what it read:
        /// at loopback's full speed the whole body can arrive before a cancel takes effect.
        case flood(head: String, bodyBytes: Int)
    }

    /// What the server saw.
    struct Log: Sendable {
        var requests: [Request] = []
        /// Connections whose reply is complete or abandoned.
        var finished = 0
        /// Body bytes written by `.flood` replies, and whether a write failed (the client left).
        var floodedBytes = 0
        var floodCutShort = false
    }

    let port: Int
    private let listener: Int32
    private let reply: @Sendable (Request) -> Reply
    private let lock = NSLock()
    private var log = Log()
    private var stopped = false

    var url: URL {
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    var seen: Log { lock.withLock { log } }

    init(reply: @escaping @Sendable (Request) -> Reply) throws {
        self.reply = reply
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw ServerError(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw ServerError(description: "bind/listen failed: \(errno)")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting; connections being served finish on their own. Call it once the test is done:
    /// the accepting thread keeps the server alive until then.
    func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Waits until `count` connections are finished, or `timeout` passes.
    func waitForFinished(_ count: Int, timeout: TimeInterval = 10) async {
        let deadline = Date().addingTimeInterval(timeout)
        while seen.finished < count, Date() < deadline {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            Thread.detachNewThread { [self] in
                serve(connection)
                close(connection)
                lock.withLock { log.finished += 1 }
            }
        }
    }

    private func serve(_ connection: Int32) {
        guard let request = readRequest(connection) else { return }
        lock.withLock { log.requests.append(request) }
        switch reply(request) {
        case .respond(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Scripted\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            _ = write(connection, Array((head + "\r\n" + body).utf8))
        case .flood(let head, let bodyBytes):
            guard write(connection, Array((head + "\r\n\r\n").utf8)) else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 65536)
            var sent = 0
            while sent < bodyBytes {
                guard write(connection, Array(chunk.prefix(bodyBytes - sent))) else {
                    lock.withLock { log.floodCutShort = true }
                    break
                }
                sent += min(chunk.count, bodyBytes - sent)
                lock.withLock { log.floodedBytes = sent }
                usleep(1000)
            }
        }
    }

    /// Reads a request head and skips its `Content-Length` body.
    private func readRequest(_ connection: Int32) -> Request? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            received += buffer[0..<count]
            headEnd = received.indices.dropLast(3).first { received[$0..<$0 + 4].elementsEqual(separator) }
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: received[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        var remaining = (Int(headers["content-length"] ?? "") ?? 0) - (received.count - headEnd - 4)
        while remaining > 0 {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            remaining -= count
        }
        return Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
    }

    /// Writes all of `bytes`; false when the client has gone.
    private func write(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, flags) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    struct ServerError: Error, CustomStringConvertible {
        var description: String
    }
}
