#if Redis
/// Takes the lock (`SET NX PX`) and a fencing token (`INCR`) in one script, so
/// both live in one slot: `{key}:lock` and `{key}:fence` share the hash tag. The counter expires
/// `ARGV[2]` ms after the key's last attempt, so that a key locked once does not keep a counter in
/// Redis forever; a missing counter starts from the server's clock in microseconds, so that tokens
/// keep growing across its expiry (as `RedisLock.fencingToken` promises) unless a key is tried more
/// than a million times a second.
private let acquireLockScript = RedisScript("""
    if redis.call('EXISTS', KEYS[2]) == 0 then
        local now = redis.call('TIME')
        redis.call('SET', KEYS[2], string.format('%d', tonumber(now[1]) * 1000000 + tonumber(now[2])))
    end
    local token = redis.call('INCR', KEYS[2])
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
    if redis.call('SET', KEYS[1], token, 'NX', 'PX', ARGV[1]) then return token end
    return false
    """)

/// Deletes the lock only if it still holds the caller's token.
private let releaseLockScript = RedisScript("""
    if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
    return 0
    """)

extension RedisTierEngine {
    /// Tries once to take the fleet-wide lock on `key` (see ``RedisCacheTier/acquireLock(forKey:ttl:)``).
    func acquireLock(forKey key: String, ttl: Duration) async throws(RedisError) -> RedisLock? {
        let tag = "{" + redisKey(key) + "}"
        let lockKey = tag + ":lock"
        let reply = try await call { executor throws(RedisError) in
            try await executor.run(acquireLockScript, keys: [lockKey, tag + ":fence"],
                                   arguments: [.integer(RedisClient.milliseconds(ttl)),
                                               .integer(Self.fenceLifetimeMilliseconds(forLockTTL: ttl))])
        }
        switch reply {
        case .integer(let token): return RedisLock(key: key, fencingToken: token, lockKey: lockKey)
        case .null: return nil
        default: throw RedisError(.unexpectedReply, "the lock script answered \(reply)")
        }
    }

    /// How long, in milliseconds, a key's fencing counter outlives its last lock attempt: a day,
    /// or 100 lock lifetimes if longer (saturating, for a lock time to live meant as "forever").
    /// Once it expires, the next attempt seeds it from the server's clock, above every earlier token.
    static func fenceLifetimeMilliseconds(forLockTTL ttl: Duration) -> Int64 {
        let (scaled, overflow) = RedisClient.milliseconds(ttl).multipliedReportingOverflow(by: 100)
        return max(86_400_000, overflow ? Int64.max / 2 : scaled)
    }

    /// Releases `lock` if this holder still has it (see ``RedisCacheTier/releaseLock(_:)``).
    func releaseLock(_ lock: RedisLock) async throws(RedisError) {
        let reply = try await call { executor throws(RedisError) in
            try await executor.run(releaseLockScript, keys: [lock.lockKey], arguments: [.integer(lock.fencingToken)])
        }
        guard reply.integer == 1 else {
            throw RedisError(.lockNotHeld, "the lock on \(lock.key) with token \(lock.fencingToken) had expired or was taken")
        }
    }
}
#endif  // Redis
