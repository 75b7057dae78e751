/// Writes of many keys: ``Cache/setValues(_:ttl:)`` and the values a bulk load returns.
///
/// The local writes run on the disk tier's queue in turns of ``bulkDiskChunk`` keys, each key
/// under its stripe lock as a single write is; with a remote tier, the values then reach it in one
/// batch (see ``RemoteTierLink/sendValues(_:ttl:)``), in each key's order of changes.
extension CacheCore {
    /// One value written to the local tiers, with its place in its key's order of remote changes.
    typealias RemoteWrite = (ticket: RemoteWriteOrder.Ticket, value: Value)

    /// See ``Cache/setValues(_:ttl:)``.
    func setValues(_ values: [String: Value], ttl: Duration?) async throws(StashError) {
        for key in values.keys { try DiskCache<Value>.validate(key) }
        let (written, failure) = await writeLocally(Array(values)) { [self] item throws(StashError) in
            try setLocalValue(item.value, forKey: item.key, ttl: ttl).map { ($0, item.value) }
        }
        if let remoteLink { await remoteLink.sendValues(written, ttl: ttl) }
        if let failure { throw failure }
    }

    /// Runs `write` for each item, on the disk tier's queue in turns of ``bulkDiskChunk`` items (on
    /// the caller's thread without a disk tier), until one throws.
    ///
    /// - Returns: The remote writes `write` returned, every one of which must be sent or abandoned,
    ///   and the error that stopped it, if any.
    func writeLocally<Item: Sendable>(
        _ items: [Item], _ write: @escaping @Sendable (Item) throws(StashError) -> RemoteWrite?
    ) async -> (written: [RemoteWrite], failure: StashError?) {
        let writeAll: @Sendable (ArraySlice<Item>) -> (written: [RemoteWrite], failure: StashError?) = { items in
            var written: [RemoteWrite] = []
            for item in items {
                do throws(StashError) {
                    if let remoteWrite = try write(item) { written.append(remoteWrite) }
                } catch {
                    return (written, error)
                }
            }
            return (written, nil)
        }
        guard let disk else { return writeAll(items[...]) }
        var written: [RemoteWrite] = []
        for start in stride(from: 0, to: items.count, by: Self.bulkDiskChunk) {
            let chunk = items[start..<min(start + Self.bulkDiskChunk, items.count)]
            do throws(StashError) {
                let done = try await disk.run { writeAll(chunk) }
                written += done.written
                if let failure = done.failure { return (written, failure) }
            } catch {
                return (written, error)
            }
        }
        return (written, nil)
    }
}
