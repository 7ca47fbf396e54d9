import NIOCore

/// Gives a new connection a small receive buffer to start with; NIO's adaptive sizing then grows
/// it as the connection's requests need. Removes itself once the connection is active.
///
/// NIO keeps each connection's receive buffer between reads, sized by the channel's receive
/// allocator, 2 KB to start with by default. An event stream's connection reads one request head
/// and then nothing for as long as it is open, so with thousands of subscribers that buffer was a
/// tenth of what each held (docs/PERFORMANCE.md). Starting at 512 bytes keeps an SDK's stream or
/// fetch request in one read; a longer one fills the buffer, and NIO then grows it at once (from
/// 512 bytes sixteenfold per full read, up to 64 KB; it shrinks again, by halves, after reads that
/// use less), so a large body costs a few more reads while the buffer is small.
///
/// A handler in the pipeline rather than a wrapper around Hummingbird's connection: a wrapper's
/// frame on the connection's task grew its stack by a slab (1 KB) that every idle stream kept.
final class SmallFirstReadHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = Never

    /// The receive buffer's first size, in bytes.
    static let initialReadBytes = 512

    func handlerAdded(context: ChannelHandlerContext) {
        // Before the connection is active, so before its first read.
        try? context.channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: Self.initialReadBytes, maximum: 65_536)
        )
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
