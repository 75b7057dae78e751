#if Redis
import NIOCore

/// A channel handler stage that turns inbound bytes into ``RESPValue`` replies.
///
/// Wrap it in `ByteToMessageHandler`. A malformed reply, or one over a limit,
/// throws a ``RedisError`` (which NIO passes to `errorCaught`); bytes left over
/// when the connection closes (or an aggregate the parser holds open) throw `.protocolViolation`.
struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    var parser: RESPParser

    init(parser: RESPParser = RESPParser()) {
        self.parser = parser
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try parser.parse(&buffer) else { return .needMoreData }
        context.fireChannelRead(NIOAny(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // The parser may hold the complete elements of an open aggregate, with nothing left in the buffer.
        if buffer.readableBytes > 0 || parser.isInsideValue {
            let count = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: count)
            throw RedisError(.protocolViolation, "the connection closed inside a reply (\(count) bytes of it left unparsed)")
        }
        return .needMoreData
    }
}
#endif  // Redis
