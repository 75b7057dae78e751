#if Redis
import NIOCore
import Stash

extension RedisTierEngine {
    /// `PUBLISH` of an invalidation of `key`, or of every key when `key` is `nil`: `k` or `a`,
    /// this instance's id, a newline, then the key.
    func invalidationCommand(forKey key: String?) -> RedisCommand {
        var message = ByteBuffer()
        message.writeStaticString(key == nil ? "a" : "k")
        message.writeString(instanceID)
        message.writeStaticString("\n")
        if let key { message.writeString(key) }
        return RedisCommand("PUBLISH", [.string(channel), .bytes(message)])
    }

    /// The invalidation in `message`, or `nil` for this instance's own messages and foreign payloads.
    static func parseInvalidation(_ message: ByteBuffer, ownID: String) -> RemoteInvalidation? {
        let bytes = message.readableBytesView
        guard let kind = bytes.first, let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let senderStart = bytes.startIndex + 1
        guard senderStart <= newline else { return nil }
        let sender = String(decoding: bytes[senderStart..<newline], as: UTF8.self)
        if sender == ownID { return nil }
        switch kind {
        case UInt8(ascii: "k"): return .key(String(decoding: bytes[(newline + 1)...], as: UTF8.self))
        case UInt8(ascii: "a"): return .all
        default: return nil
        }
    }

    /// Subscribes to the invalidation channel on a dedicated connection and calls
    /// `handler` for every other instance's write or removal (see
    /// ``RedisCacheTier/startReceivingInvalidations(_:)``), replacing an earlier subscription.
    func startReceivingInvalidations(_ handler: @escaping @Sendable (RemoteInvalidation) -> Void) async throws(RedisError) {
        let candidates: [RedisConfiguration]
        if let subscriberCandidates {
            candidates = subscriberCandidates
        } else if let client = executor as? RedisClient {
            candidates = [client.configuration]
        } else {
            candidates = try await executor.primaryClients().map(\.configuration)
        }
        let ownID = instanceID
        // From the subscription's loss until the cache is handed its return (`.all`, after a
        // restarted server is emptied), other instances' messages are dropped: the restored
        // subscription delivers them from its SUBSCRIBE on, before the emptying. The `.all`
        // covers them (it drops every local copy), and a peer's `.all` delivered first would
        // count as the return: the cache would repair its stale keys into a namespace about to
        // be emptied, and then drop their local copies at the real return. Every delivery is made
        // with this lock held, so that lifting it and delivering the `.all` are one step: a
        // message on the event loop comes either before (dropped) or after the `.all`.
        let restoring = LockedValue(false)
        let newSubscriber = RedisSubscriber(
            candidates: candidates, channel: channel, logger: logger,
            onMessage: { message in
                guard let invalidation = Self.parseInvalidation(message, ownID: ownID) else { return }
                restoring.withLock { restoring in
                    if !restoring { handler(invalidation) }
                }
            },
            onLost: {
                restoring.withLock { restoring in
                    restoring = true
                    handler(.subscriptionLost)
                }
            },
            onResubscribe: { [self] in
                // Redis answers again: the next call probes it now instead of after the rest of
                // the breaker's cool-down, so the cache's repairs and sharing resume at once.
                breaker.allowProbeNow()
                // A restarted server's reloaded values go before the cache reads Redis again.
                await emptyIfRestarted()
                restoring.withLock { restoring in
                    restoring = false
                    handler(.all)
                }
            })
        try await newSubscriber.start()
        await recordRunIDs()
        let previous = subscriber.withLock { subscriber in
            defer { subscriber = newSubscriber }
            return subscriber
        }
        await previous?.stop()
    }
}
#endif  // Redis
