import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

// The floor under any Swift event stream (issue #32): swift-nio alone, no Hummingbird, no task
// per stream. `GET /sse` answers a Server-Sent Events stream; `POST /publish?version=N` encodes
// `id: N` once and writes the same bytes to every open stream's channel from the event loop that
// owns it — what Vane's StreamHub does, without authentication, limits, versions or a database.
//
//     vane-stream-benchmark nio-sse PORT       (a process of its own, started by the benchmark)

/// Every open stream, grouped by the event loop of its channel.
final class FloorStreams: Sendable {
    private struct LoopGroup {
        let loop: any EventLoop
        var channels: [ObjectIdentifier: any Channel] = [:]
    }
    private let groups = NIOLockedValueBox<[ObjectIdentifier: LoopGroup]>([:])

    func add(_ channel: any Channel) {
        let loop = channel.eventLoop
        groups.withLockedValue {
            $0[ObjectIdentifier(loop), default: LoopGroup(loop: loop)].channels[ObjectIdentifier(channel)] = channel
        }
    }

    func remove(_ channel: any Channel) {
        _ = groups.withLockedValue {
            $0[ObjectIdentifier(channel.eventLoop)]?.channels.removeValue(forKey: ObjectIdentifier(channel))
        }
    }

    /// One hop per event loop, then one write of the same buffer per channel.
    func publish(_ event: ByteBuffer) {
        let snapshot = groups.withLockedValue { Array($0.values) }
        for group in snapshot {
            let channels = group.channels.values
            group.loop.execute {
                for channel in channels {
                    channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(event)), promise: nil)
                }
            }
        }
    }
}

/// One connection: a stream, or a publish.
final class FloorHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let streams: FloorStreams
    private var head: HTTPRequestHead?

    init(streams: FloorStreams) { self.streams = streams }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request): head = request
        case .body: break
        case .end:
            guard let head else { return }
            if head.uri.hasPrefix("/sse") {
                var headers = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
                headers.add(name: "Transfer-Encoding", value: "chunked")
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
                    promise: nil
                )
                context.writeAndFlush(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "retry: 1000\n\n")))),
                    promise: nil
                )
                streams.add(context.channel)
            } else if head.uri.hasPrefix("/publish"),
                let version = head.uri.split(separator: "=").last.flatMap({ Int($0) })
            {
                streams.publish(
                    ByteBuffer(string: "id: \(version)\nevent: version\ndata: {\"version\":\(version)}\n\n")
                )
                let headers = HTTPHeaders([("Content-Length", "0")])
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
                    promise: nil
                )
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let headers = HTTPHeaders([("Content-Length", "0")])
                context.write(
                    wrapOutboundOut(
                        .head(HTTPResponseHead(version: head.version, status: .notFound, headers: headers))
                    ),
                    promise: nil
                )
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            self.head = nil
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        streams.remove(context.channel)
        context.fireChannelInactive()
    }
}

/// `nio-sse` mode: serves until killed.
func runNIOFloorServer(port: Int) throws -> Never {
    let streams = FloorStreams()
    let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount))
        .serverChannelOption(.backlog, value: 4096)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.pipeline.configureHTTPServerPipeline().flatMap {
                channel.pipeline.addHandler(FloorHandler(streams: streams))
            }
        }
        .bind(host: "127.0.0.1", port: port)
        .wait()
    try channel.closeFuture.wait()
    exit(0)
}
