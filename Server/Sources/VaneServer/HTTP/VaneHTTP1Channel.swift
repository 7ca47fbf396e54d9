import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import VaneServerCore

/// The main and health ports' HTTP/1.1 connections: Hummingbird's `HTTP1Channel` with two
/// differences that an open event stream would otherwise pay for as long as it lasts.
///
/// - ``HTTPConnectionHandler`` in place of Hummingbird's connection state handler: the same idle
///   timeout, without a timer kept while a response is written, and with the hooks a stream needs
///   (writability, the client's end, the close) in the same handler.
/// - A small first receive buffer. NIO keeps each connection's last read buffer for the next
///   read, 2 KB to start with by default; an event stream reads one request head and then nothing
///   for as long as it is open. Starting at 512 bytes keeps an SDK's stream or fetch request in
///   one read; a read that fills the buffer grows it sixteenfold at once (up to 64 KB), and reads
///   that use less shrink it again by halves, so a large body costs a few more reads while the
///   buffer is small.
///
/// Everything else (the decoder's limits, no pipelining assistance since `NIOAsyncChannel` takes
/// requests in order, half-closure, Hummingbird's request loop) is as `HTTP1Channel` sets it.
/// A type of its own rather than a wrapper around `HTTP1Channel`: a wrapper's frame on every
/// connection's task grew its stack by a slab (1 KB) that every idle stream kept.
struct VaneHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    /// The receive buffer's first size, in bytes.
    static let initialReadBytes = 512

    let responder: HTTPChannelHandler.Responder
    /// How long a connection may wait for a request.
    let idleTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Before the connection is active, so before its first read.
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: Self.initialReadBytes, maximum: 65_536)
            )
            // Hummingbird's limits: 80 KB of header fields, at most 1,000 of them.
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldCount = 1_000
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: false,
                withErrorHandling: false,
                withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: limits
            )
            try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try channel.pipeline.syncOperations.addHandler(HTTPConnectionHandler(idleTimeout: idleTimeout))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel,
                configuration: .init(isOutboundHalfClosureEnabled: true)
            )
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
