import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import TestSupport
import Vane

/// A real HTTP server on loopback that stands between the SDK and a real `vane serve`: it
/// forwards requests, or answers with the fault a test asks for (an error status, a slow answer,
/// a truncated or malformed body, a dropped connection).
final class FaultProxy: Sendable {
    /// What the proxy does with the next requests.
    enum Behaviour: Sendable {
        /// Forward to the upstream server.
        case forward
        /// Answer this instead.
        case respond(status: Int, headers: [String: String], body: String)
        /// Wait, then forward.
        case delay(seconds: Double)
        /// Send a head announcing `declaredLength` bytes, then `body` (shorter), then close.
        case truncate(declaredLength: Int, body: String)
        /// Close the connection without answering.
        case close
        /// Answer 200 with an event stream, send `body`, then nothing more, ever (a connection
        /// that died without a word: a NAT timeout, a sleeping laptop).
        case fallSilent(body: String)
    }

    /// One request the proxy received, and the status it answered (nil for none).
    struct Received: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
        var status: Int?
    }

    let url: URL
    let upstream: URL
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let state = NIOLockedValueBox<(behaviour: Behaviour, received: [Received])>((.forward, []))

    /// A proxy in front of `upstream`; with `tls`, it speaks HTTPS with that context.
    init(upstream: URL, tls: NIOSSLContext? = nil) throws {
        self.upstream = upstream
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        let box = NIOLockedValueBox<FaultProxy?>(nil)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                }.flatMap {
                    channel.pipeline.configureHTTPServerPipeline()
                }.flatMap {
                    channel.pipeline.addHandler(FaultProxyHandler(proxy: box))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        let scheme = tls == nil ? "http" : "https"
        guard let port = channel.localAddress?.port, let url = URL(string: "\(scheme)://127.0.0.1:\(port)") else {
            throw ServeProcess.StartError(description: "the fault proxy has no port")
        }
        self.url = url
        box.withLockedValue { $0 = self }
    }

    /// Sets what the proxy does from now on.
    func set(_ behaviour: Behaviour) {
        state.withLockedValue { $0.behaviour = behaviour }
    }

    var behaviour: Behaviour { state.withLockedValue { $0.behaviour } }

    /// Every request so far.
    var received: [Received] { state.withLockedValue { $0.received } }

    func record(_ request: Received) -> Int {
        state.withLockedValue { state in
            state.received.append(request)
            return state.received.count - 1
        }
    }

    func recordStatus(_ status: Int, at index: Int) {
        state.withLockedValue { $0.received[index].status = status }
    }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

private final class FaultProxyHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let proxy: NIOLockedValueBox<FaultProxy?>
    private let pending = NIOLockedValueBox<(head: HTTPRequestHead?, body: ByteBuffer)>((nil, ByteBuffer()))

    init(proxy: NIOLockedValueBox<FaultProxy?>) {
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            pending.withLockedValue { $0 = (head, ByteBuffer()) }
        case .body(var chunk):
            pending.withLockedValue { _ = $0.body.writeBuffer(&chunk) }
        case .end:
            let (head, body) = pending.withLockedValue { $0 }
            guard let head, let proxy = proxy.withLockedValue({ $0 }) else { return }
            handle(head: head, body: body, proxy: proxy, context: context)
        }
    }

    private func handle(head: HTTPRequestHead, body: ByteBuffer, proxy: FaultProxy, context: ChannelHandlerContext) {
        let headers = Dictionary(head.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        let bodyText = String(buffer: body)
        let index = proxy.record(
            FaultProxy.Received(method: "\(head.method)", path: head.uri, headers: headers, body: bodyText, status: nil)
        )
        let channel = context.channel
        switch proxy.behaviour {
        case .respond(let status, let responseHeaders, let text):
            proxy.recordStatus(status, at: index)
            Self.write(status: status, headers: responseHeaders, body: Data(text.utf8), to: channel)
        case .truncate(let declaredLength, let text):
            var responseHead = HTTPResponseHead(version: .http1_1, status: .ok)
            responseHead.headers.add(name: "Content-Type", value: "application/json")
            responseHead.headers.add(name: "Content-Length", value: String(declaredLength))
            channel.write(HTTPServerResponsePart.head(responseHead), promise: nil)
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: text))))
                .whenComplete { _ in channel.close(promise: nil) }
        case .close:
            channel.close(promise: nil)
        case .fallSilent(let text):
            proxy.recordStatus(200, at: index)
            var responseHead = HTTPResponseHead(version: .http1_1, status: .ok)
            responseHead.headers.add(name: "Content-Type", value: "text/event-stream")
            channel.write(HTTPServerResponsePart.head(responseHead), promise: nil)
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: text))), promise: nil)
        case .forward:
            forward(head: head, headers: headers, body: bodyText, proxy: proxy, index: index, channel: channel)
        case .delay(let seconds):
            channel.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
                self.forward(head: head, headers: headers, body: bodyText, proxy: proxy, index: index, channel: channel)
            }
        }
    }

    private func forward(
        head: HTTPRequestHead,
        headers: [String: String],
        body: String,
        proxy: FaultProxy,
        index: Int,
        channel: any Channel
    ) {
        guard let url = URL(string: proxy.upstream.absoluteString + head.uri) else { return }
        var forwarded = headers
        for name in ["host", "content-length", "connection"] { forwarded[name] = nil }
        let request = TransportRequest(
            method: "\(head.method)",
            url: url,
            headers: forwarded,
            body: body.isEmpty ? nil : Data(body.utf8),
            timeout: 30
        )
        Task {
            do {
                let response = try await URLSessionTransport().send(request)
                proxy.recordStatus(response.status, at: index)
                var responseHeaders = response.headers
                for name in responseHeaders.keys
                where ["content-length", "connection", "transfer-encoding"].contains(name.lowercased()) {
                    responseHeaders[name] = nil
                }
                // The answer can come after the proxy shut down (a delayed request outlives a short
                // test): a closed channel gets nothing, and the write runs on the channel's loop,
                // which drops it if the loop is gone instead of leaking the write's promise.
                guard channel.isActive else { return }
                let headers = responseHeaders
                channel.eventLoop.execute {
                    Self.write(status: response.status, headers: headers, body: response.body, to: channel)
                }
            } catch {
                channel.close(promise: nil)
            }
        }
    }

    private static func write(status: Int, headers: [String: String], body: Data, to channel: any Channel) {
        var head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status))
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        head.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
        if !body.isEmpty {
            channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        }
        channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
    }
}
