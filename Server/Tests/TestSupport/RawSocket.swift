import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to a test server, for what URLSession hides: a client with a tiny
/// receive buffer that stops reading, an idle socket, a request trickled a byte at a time.
package final class RawSocket: @unchecked Sendable {
    private let descriptor: Int32

    /// Connects to `127.0.0.1:port`; `receiveBuffer` (bytes) is set before connecting, so the
    /// advertised window stays small.
    package init(port: Int, receiveBuffer: Int32? = nil) throws {
        #if canImport(Glibc)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw RawSocketError(description: "socket() failed: \(errno)") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw RawSocketError(description: "connect() failed: \(errno)")
        }
    }

    /// Sends text.
    package func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard sent > 0 else { throw RawSocketError(description: "write() failed: \(errno)") }
            offset += sent
        }
    }

    /// Reads whatever arrives until `condition` holds on everything read so far (or `timeout` passes).
    ///
    /// Never blocks a thread: the test server runs in this process on the same concurrency pool.
    package func read(timeout: TimeInterval, until condition: (String) -> Bool) async -> String {
        var received: [UInt8] = []
        _ = await receive(timeout: timeout) { bytes in
            received.append(contentsOf: bytes)
            return condition(String(decoding: received, as: UTF8.self))
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// How ``receive(timeout:_:)`` stopped.
    private enum ReceiveEnd {
        case satisfied, closed, timedOut
    }

    /// Polls without blocking and hands each chunk to `handle` until it returns true, the server
    /// closes the connection, or `timeout` passes.
    private func receive(timeout: TimeInterval, _ handle: (ArraySlice<UInt8>) -> Bool) async -> ReceiveEnd {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else {
                try? await Task.sleep(nanoseconds: 10_000_000)
                continue
            }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return .closed }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .closed
            }
            if handle(buffer[0..<count]) { return .satisfied }
        }
        return .timedOut
    }

    /// Sends text without raising SIGPIPE when the server has closed the connection.
    /// - Returns: False when the connection is closed.
    package func trySend(_ text: String) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress, $0.count, flags) }
        return sent == bytes.count
    }

    /// Waits until the server closes the connection (end of stream or a reset) or `timeout`
    /// passes, discarding whatever arrives. Returns whether it closed.
    package func waitForClose(timeout: TimeInterval) async -> Bool {
        await receive(timeout: timeout) { _ in false } == .closed
    }

    /// Closes the connection abruptly: a TCP reset (SO_LINGER 0) instead of an orderly close, as a
    /// phone that loses its network does. Do not use the socket afterwards.
    package func reset() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    deinit { close(descriptor) }
}

/// A socket call failed.
package struct RawSocketError: Error, CustomStringConvertible {
    package var description: String
}
