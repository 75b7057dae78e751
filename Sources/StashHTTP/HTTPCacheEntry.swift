/// Everything an ``HTTPCache`` stores under one key (a method and a URL): the key's responses,
/// one per `Vary` variant, most recent first.
///
/// Opaque: its only public use is to name the value type of a remote tier shared by several
/// HTTP caches (``HTTPCache/Configuration/remote``), built with the
/// `DiskCodec.httpCacheEntry` codec, which reads and writes the record described in
/// <doc:StoredEntryFormat>:
///
/// ```swift
/// let tier = RedisCacheTier<HTTPCacheEntry>(client: redis, codec: .httpCacheEntry,
///                                           configuration: .init(keyPrefix: "http:"))
/// var configuration = HTTPCache.Configuration(mode: .shared)
/// configuration.remote = tier
/// ```
///
/// Immutable, so thread-safe; the memory tier holds decoded entries, so a memory hit decodes
/// nothing.
public final class HTTPCacheEntry: Sendable {
    let variants: [StoredResponse]

    init(variants: [StoredResponse]) {
        self.variants = variants
    }

    /// The memory tier's cost: the sum of the variants' costs.
    var cost: Int { variants.reduce(0) { $0 + $1.cost } }

    /// A new entry with `response` first, replacing a variant with the same selecting values,
    /// keeping at most `limit` variants.
    func inserting(_ response: StoredResponse, limit: Int) -> HTTPCacheEntry {
        var kept = [response]
        for variant in variants where variant.varyValues != response.varyValues && kept.count < limit {
            kept.append(variant)
        }
        return HTTPCacheEntry(variants: kept)
    }

    /// A new entry with `old` replaced by `new` in place, or `nil` when `old` is no longer there.
    func replacing(_ old: StoredResponse, with new: StoredResponse) -> HTTPCacheEntry? {
        guard let index = variants.firstIndex(where: { $0 === old }) else { return nil }
        var updated = variants
        updated[index] = new
        return HTTPCacheEntry(variants: updated)
    }

    /// A new entry without `response`, or `nil` when none would remain.
    func removing(_ response: StoredResponse) -> HTTPCacheEntry? {
        let kept = variants.filter { $0 !== response }
        return kept.isEmpty ? nil : HTTPCacheEntry(variants: kept)
    }
}
