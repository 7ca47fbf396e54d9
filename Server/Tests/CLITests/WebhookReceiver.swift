import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A webhook endpoint on loopback for tests: records every request and answers 200, except
/// that while it holds, requests from the `holdFrom`-th on get no answer at all (a send cut by a
/// crash of the sender).
final class WebhookReceiver: Sendable {
    /// One request as it arrived.
    struct Received: Sendable {
        var id: String
        var body: String
    }

    private struct State {
        var received: [Received] = []
        var holdFrom: Int?
    }

    private let state: NIOLockedValueBox<State>
    private let channel: any Channel

    /// The port it listens on, on 127.0.0.1.
    var port: Int { channel.localAddress?.port ?? 0 }

    private init(state: NIOLockedValueBox<State>, channel: any Channel) {
        self.state = state
        self.channel = channel
    }

    /// Listens on a free loopback port.
    /// - Parameter holdFrom: The first request (from 1) to leave unanswered; nil answers all.
    static func start(holdFrom: Int?) async throws -> WebhookReceiver {
        let state = NIOLockedValueBox(State(holdFrom: holdFrom))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return WebhookReceiver(state: state, channel: channel)
    }

    /// Every request so far, in the order they arrived.
    var received: [Received] { state.withLockedValue { $0.received } }

    /// Answers every request from now on.
    func stopHolding() {
        state.withLockedValue { $0.holdFrom = nil }
    }

    func close() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let state: NIOLockedValueBox<State>
        var head: HTTPRequestHead?
        var body = ByteBuffer()

        init(state: NIOLockedValueBox<State>) {
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body.clear()
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                let received = Received(
                    id: head?.headers.first(name: "webhook-id") ?? "",
                    body: String(buffer: body)
                )
                let answer = state.withLockedValue { state -> Bool in
                    state.received.append(received)
                    guard let holdFrom = state.holdFrom else { return true }
                    return state.received.count < holdFrom
                }
                guard answer else { return }
                var headers = HTTPHeaders()
                headers.add(name: "content-length", value: "0")
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                    promise: nil
                )
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
