#if Redis
/// Takes the lock (`SET NX PX`) and a fencing token (`INCR`) in one script, so
/// both live in one slot: `{key}:lock` and `{key}:fence` share the hash tag. The counter expires
/// `ARGV[2]` ms after the key's last attempt, so that a key locked once does not keep a counter in
/// Redis forever.
private let acquireLockScript = RedisScript("""
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
                                               .integer(RedisClient.milliseconds(Self.fenceLifetime(forLockTTL: ttl)))])
        }
        switch reply {
        case .integer(let token): return RedisLock(key: key, fencingToken: token, lockKey: lockKey)
        case .null: return nil
        default: throw RedisError(.unexpectedReply, "the lock script answered \(reply)")
        }
    }

    /// How long a key's fencing counter outlives its last lock attempt: a day, or 100 lock
    /// lifetimes if longer. Tokens stay increasing as long as a holder could still act on an
    /// older one (its lock lasts at most one lifetime); a key not locked for that long starts
    /// again from 1.
    static func fenceLifetime(forLockTTL ttl: Duration) -> Duration {
        max(.seconds(86_400), ttl * 100)
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
