/// Writes of many keys: ``Cache/setValues(_:ttl:)`` and the values a bulk load returns.
///
/// With a disk tier, the keys go in chunks of ``bulkDiskChunk``: one turn of the disk tier's queue
/// and one disk transaction per chunk, with every stripe lock of the chunk's keys held through it
/// (so each key is written as a single write writes it: no promotion, load or other write of the
/// key runs meanwhile). With a remote tier, the values then reach it in one batch (see
/// ``RemoteTierLink/sendValues(_:ttl:)``), in each key's order of changes.
extension CacheCore {
    /// One value written to the local tiers, with its place in its key's order of remote changes.
    typealias RemoteWrite = (ticket: RemoteWriteOrder.Ticket, value: Value)

    /// See ``Cache/setValues(_:ttl:)``.
    func setValues(_ values: [String: Value], ttl: Duration?) async throws(StashError) {
        for key in values.keys { try DiskCache<Value>.validate(key) }
        let (written, failure) = await writeLocally(Array(values), ttl: ttl, grace: nil) { [self] _, key in
            loadTickets.withLock { $0.void(key) }
            return true
        }
        if let remoteLink { await remoteLink.sendValues(written, ttl: ttl) }
        if let failure { throw failure }
    }

    /// Writes `values` (without duplicate keys) to the local tiers, disk then memory, with a
    /// fail-safe `grace` in memory for loaded values, and takes a remote ticket for each key
    /// written. `admit` runs first for each key, given its index in `values`, under its stripe
    /// lock: it voids or redeems the key's load tickets, and a key it refuses is skipped. Each
    /// written key ends as a single write leaves it (``finishLocalWrite``): a value the disk
    /// refuses fails alone.
    ///
    /// - Returns: The remote writes, every one of which must be sent or abandoned, and the first
    ///   error, if any.
    func writeLocally(
        _ values: [(key: String, value: Value)], ttl: Duration?, grace: Duration?,
        admit: @escaping @Sendable (_ index: Int, _ key: String) -> Bool
    ) async -> (written: [RemoteWrite], failure: StashError?) {
        guard let disk else {
            return writeChunk(values[...], ttl: ttl, grace: grace, admit: admit)
        }
        var written: [RemoteWrite] = []
        var failure: StashError?
        for start in stride(from: 0, to: values.count, by: Self.bulkDiskChunk) {
            let chunk = values[start..<min(start + Self.bulkDiskChunk, values.count)]
            do throws(StashError) {
                let done = try await disk.run { [self] in writeChunk(chunk, ttl: ttl, grace: grace, admit: admit) }
                written += done.written
                failure = failure ?? done.failure
            } catch {
                failure = failure ?? error
            }
        }
        return (written, failure)
    }

    /// ``writeLocally(_:ttl:grace:admit:)`` for one chunk, on the disk tier's queue if there is one:
    /// every key's stripe lock held, one disk transaction.
    private func writeChunk(
        _ chunk: ArraySlice<(key: String, value: Value)>, ttl: Duration?, grace: Duration?,
        admit: (_ index: Int, _ key: String) -> Bool
    ) -> (written: [RemoteWrite], failure: StashError?) {
        // withChanges throws only what its body throws, and this body throws nothing.
        (try? stripes.withChanges(for: chunk.lazy.map(\.key)) { () -> (written: [RemoteWrite], failure: StashError?) in
            let admitted = chunk.indices.filter { admit($0, chunk[$0].key) }.map { chunk[$0] }
            let diskWrites: [Result<Int?, StashError>] = disk.map { disk in
                disk.setValuesReturningSizes(admitted, ttl: ttl).map { $0.map(Optional.some) }
            } ?? admitted.map { Self.keyCheckWithoutDisk($0.key) }
            var written: [RemoteWrite] = []
            var failure: StashError?
            for ((key, value), diskWrite) in zip(admitted, diskWrites) {
                do throws(StashError) {
                    try finishLocalWrite(value, forKey: key, ttl: ttl, grace: grace, diskWrite: diskWrite, writingMemory: writeMemory)
                    if let ticket = remoteLink?.order.enqueue(key) { written.append((ticket, value)) }
                } catch {
                    failure = failure ?? error
                }
            }
            return (written, failure)
        }) ?? ([], nil)
    }
}
