#if Redis
import NIOCore
import Stash

extension RedisTierEngine {
    /// Each primary's `run_id` (from `INFO server`), by `host:port`, as last seen.
    typealias RunIDs = [String: String]

    /// Reads every primary's `run_id`; a primary that does not answer is left out.
    func currentRunIDs() async -> RunIDs {
        guard let clients = try? await executor.primaryClients() else { return [:] }
        var runIDs: RunIDs = [:]
        for client in clients {
            guard let reply = try? await client.send(RedisCommand("INFO", ["server"])),
                  let runID = Self.runID(inInfo: reply.string ?? "") else { continue }
            runIDs["\(client.configuration.host):\(client.configuration.port)"] = runID
        }
        return runIDs
    }

    /// The `run_id` field of an `INFO` reply, or `nil` when it has none.
    static func runID(inInfo info: String) -> String? {
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("run_id:") {
            let value = line.dropFirst("run_id:".count).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// Records the primaries' `run_id`s when the subscription is first made.
    func recordRunIDs() async {
        guard emptiesAfterRestart else { return }
        let runIDs = await currentRunIDs()
        knownRunIDs.withLock { $0 = runIDs }
    }

    /// After the subscription comes back, before the cache hears of it: if a primary's `run_id`
    /// changed, the server restarted, and whatever it reloaded from its append-only file or
    /// snapshot may be older than what the fleet wrote while it was down (by an instance that died
    /// before it could repair its keys, say). The namespace is then emptied once, by the first
    /// instance to see the new `run_id` (`SET NX` of a guard key, which the emptying leaves in place
    /// even where the namespace holds it: an empty prefix, or one that begins `stash-restart:`);
    /// the others wait until it is done (at most
    /// ``restartEmptyingWait``). Nothing is published: each cache drops its local copies when it
    /// hears of the restored subscription, after this returns, and keeps its unsent writes.
    func emptyIfRestarted() async {
        guard emptiesAfterRestart else { return }
        let current = await currentRunIDs()
        let restarted: [String] = knownRunIDs.withLock { known in
            defer { known.merge(current) { $1 } }
            return current.compactMap { address, runID in
                guard let previous = known[address], previous != runID else { return nil }
                return runID
            }
        }
        guard !restarted.isEmpty else { return }
        let guardKey = "stash-restart:" + keyPrefix + restarted.sorted().joined(separator: ",")
        func setGuard(_ value: String, _ condition: String) async -> Bool {
            let command = RedisCommand("SET", key: guardKey, [.string(guardKey), .string(value), .string(condition),
                                                              .string("PX"), .string("600000")])
            return (try? await executor.send(command))?.string == "OK"
        }
        if await setGuard("emptying", "NX") {
            logger.warning(
                "Redis restarted and may have reloaded values older than the fleet's last writes; emptying the namespace",
                metadata: ["prefix": "\(keyPrefix)"])
            do {
                try await emptyNamespace(keeping: guardKey)
            } catch {
                logger.error("could not empty the namespace after a Redis restart", metadata: ["error": "\(error)"])
            }
            _ = await setGuard("done", "XX")
            return
        }
        // Another instance empties it: wait until it is done, or gone, or the wait is over.
        let deadline = ContinuousClock.now + Self.restartEmptyingWait
        while ContinuousClock.now < deadline {
            let state = (try? await executor.send(RedisCommand("GET", key: guardKey, [.string(guardKey)])))?.string
            if state != "emptying" { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
        logger.warning("another instance did not finish emptying the namespace after a Redis restart",
                       metadata: ["prefix": "\(keyPrefix)"])
    }

    /// The longest an instance waits for another to empty the namespace after a restart: 10 s.
    static var restartEmptyingWait: Duration { .seconds(10) }
}
#endif  // Redis
