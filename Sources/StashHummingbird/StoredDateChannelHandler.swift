#if Hummingbird
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A channel handler that sends a cached response with its stored `Date`, which Hummingbird's
/// `Application` replaces with the current date on every response.
///
/// A response served from an `HTTPCache` must carry the `Date` its origin gave it (RFC 9110
/// §6.6.1): a downstream cache computes the response's freshness from `Date`, `Age` and
/// `Expires`, so a `Date` of now makes it count the response's age twice. Hummingbird's
/// `Application` writes `Date` after the responder returns, where no middleware can change it.
/// With `keepsStoredDate: true`, ``HTTPCacheMiddleware`` and ``HTTPCacheResponder`` hand the
/// stored date over in a `Stash-Stored-Date` field; this handler, in the server's pipeline, moves
/// it into `Date` as the response head is written:
///
/// ```swift
/// router.add(middleware: HTTPCacheMiddleware(cache: responses, keepsStoredDate: true))
/// let app = Application(
///     router: router,
///     server: .http1(configuration: .init(additionalChannelHandlers: [StoredDateChannelHandler()])))
/// ```
///
/// A response head without the field passes unchanged, so the handler costs one field lookup per
/// response. Without the handler, `Stash-Stored-Date` reaches the client next to Hummingbird's
/// `Date`: set both or neither.
///
/// Thread-safe: stateless; make one per channel, as `additionalChannelHandlers` does.
public final class StoredDateChannelHandler: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    /// The field that carries a stored response's `Date` from the cache to this handler.
    static let storedDate = HTTPField.Name("Stash-Stored-Date")!

    /// A handler for one channel's pipeline.
    public init() {}

    /// Writes `data`, moving a response head's `Stash-Stored-Date` into its `Date`. O(fields).
    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), let date = head.headerFields[Self.storedDate] else {
            context.write(data, promise: promise)
            return
        }
        head.headerFields[Self.storedDate] = nil
        head.headerFields[.date] = date
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
#endif  // Hummingbird
