import HTTPTypes
import Logging
import Stash

/// Reading and writing the store (a ``Cache``: memory, disk, remote), with its one policy for
/// disk failures: a write the disk refuses leaves the key in no tier, and is logged once per
/// incident, never thrown at the request it came from.
extension HTTPCacheEngine {
    /// The entry for `key`: from memory, else from disk, else from the remote tier (then kept in
    /// the tiers above). A disk that fails is logged and skipped: the request goes to the origin.
    func entry(forKey key: String) async -> HTTPCacheEntry? {
        do {
            return try await store.value(forKey: key)
        } catch {
            reportFailure("reading a stored HTTP response failed; the disk tier is skipped", key: key, error: error)
            return nil
        }
    }

    /// Adds `response` to `key`'s entry (a new variant, or in place of the one it matches).
    ///
    /// The entry is read again here, not taken from the lookup that preceded the origin request:
    /// while the origin answered, an unsafe request may have invalidated the URL or
    /// ``removeAll()`` emptied the store (the old variants must not come back). On a miss this is a
    /// second memory lookup and a second disk lookup (one indexed `SELECT`).
    func insert(_ response: StoredResponse, forKey key: String) async {
        let entry = (await entry(forKey: key))?.inserting(response, limit: configuration.maximumVariantsPerURL)
            ?? HTTPCacheEntry(variants: [response])
        await write(entry, forKey: key)
    }

    func remove(_ response: StoredResponse, forKey key: String) async {
        guard let entry = await entry(forKey: key) else { return }
        if let remaining = entry.removing(response) {
            await write(remaining, forKey: key)
        } else {
            do {
                _ = try await store.removeValue(forKey: key)
            } catch {
                reportFailure("removing a stored HTTP response failed", key: key, error: error)
            }
        }
    }

    func write(_ entry: HTTPCacheEntry, forKey key: String) async {
        do {
            try await store.setValue(entry, forKey: key)
            // Only a disk tier fails (a remote tier's failures stay inside `Cache`): a memory-only
            // store takes no incident lock per write.
            if store.disk != nil { storeIncidents.recordSuccess { _ in "the HTTP cache's disk tier works again" } }
        } catch {
            // The store dropped the key from memory; the disk may still hold the key's older
            // record, which would be served (with variants a removal meant to drop). Best effort:
            // a disk that failed the write may fail this too, and the record then stays until it
            // is replaced or evicted. A closed store holds nothing to protect and refuses it anyway.
            if error.code != .closed { _ = try? await store.removeValue(forKey: key) }
            reportFailure("storing an HTTP response failed; it is not cached", key: key, error: error)
        }
    }

    /// Logs a failure of the store, once per incident; none after ``close()``, when every disk
    /// operation fails as documented.
    func reportFailure(_ message: Logger.Message, key: String, error: StashError) {
        guard error.code != .closed else { return }
        storeIncidents.recordFailure(message, metadata: ["key": "\(key)", "error": "\(error)"])
    }

    /// Removes the GET and HEAD entries of one URL from every tier.
    func invalidate(scheme: String?, authority: String?, path: String) async throws {
        for method in [HTTPRequest.Method.get, .head] {
            let key = Self.key(method: method, scheme: scheme, authority: authority, path: path)
            _ = try await store.removeValue(forKey: key)
        }
    }

    func removeAll() async throws {
        try await store.removeAll()
    }

    /// Closes the store's tiers without waiting for its background work (see
    /// `Cache.closeWithoutWaiting()`).
    func close() {
        store.closeWithoutWaiting()
    }

    /// Closes the store, waiting up to `timeout` for its background work (changes on their way
    /// to the remote tier).
    func close(timeout: Duration) async {
        await store.close(timeout: timeout)
    }
}
