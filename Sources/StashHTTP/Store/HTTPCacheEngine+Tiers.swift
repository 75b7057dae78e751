#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import Logging
import Stash

/// Writing to the tiers: memory and disk, with one policy for disk failures.
extension HTTPCacheEngine {
    /// Adds `response` to `key`'s entry (a new variant, or in place of the one it matches).
    ///
    /// The entry is read again here, not taken from the lookup that preceded the origin request:
    /// while the origin answered, an unsafe request may have invalidated the URL or
    /// ``removeAll()`` emptied the store (the old variants must not come back). On a miss this is a
    /// second memory lookup and a second disk lookup (one indexed `SELECT`).
    func insert(_ response: StoredResponse, forKey key: String) async {
        let entry = (await entry(forKey: key))?.inserting(response, limit: configuration.maximumVariantsPerURL)
            ?? StoredEntry(variants: [response])
        await write(entry, forKey: key)
    }

    func remove(_ response: StoredResponse, forKey key: String) async {
        guard let entry = await entry(forKey: key) else { return }
        if let remaining = entry.removing(response) {
            await write(remaining, forKey: key)
        } else {
            memory.removeValue(forKey: key)
            if let disk, !isDiskClosed { _ = try? await disk.removeValue(forKey: key) }
        }
    }

    func write(_ entry: StoredEntry, forKey key: String) async {
        memory.setValue(entry, forKey: key, cost: entry.cost)
        guard let disk, !isDiskClosed else { return }
        do {
            guard let encoded = entry.encoded() else {
                // A length past 4 GiB: memory only. The disk's older record must not come back.
                _ = try await disk.removeValue(forKey: key)
                return
            }
            try await disk.setValue(Data(encoded), forKey: key)
            diskIncidents.recordSuccess { _ in "the HTTP cache's disk tier works again" }
        } catch {
            // The disk may still hold the key's older record: once memory evicts the new one, that
            // record would be served (with variants a removal meant to drop). Best effort: a disk
            // that failed the write may fail this too, and the record then goes at its expiry.
            _ = try? await disk.removeValue(forKey: key)
            reportDiskFailure("storing an HTTP response on disk failed; it is kept in memory only", key: key, error: error)
        }
    }

    /// Removes the GET and HEAD entries of one URL from both tiers.
    func invalidate(scheme: String?, authority: String?, path: String) async throws {
        for method in [HTTPRequest.Method.get, .head] {
            let key = Self.key(method: method, scheme: scheme, authority: authority, path: path)
            memory.removeValue(forKey: key)
            if let disk, !isDiskClosed { _ = try await disk.removeValue(forKey: key) }
        }
    }

    func removeAll() async throws {
        memory.removeAll()
        if let disk, !isDiskClosed { try await disk.removeAll() }
    }

    func close() {
        let shouldClose = state.withLock { state -> Bool in
            defer { state.diskClosed = true }
            return !state.diskClosed
        }
        if shouldClose { disk?.close() }
    }
}
