/// Everything stored under one key (method + URL): its variants, most recent first.
///
/// Immutable; the memory tier holds decoded entries so a hit decodes nothing.
final class StoredEntry: Sendable {
    let variants: [StoredResponse]

    init(variants: [StoredResponse]) {
        self.variants = variants
    }

    /// The memory tier's cost: the sum of the variants' costs.
    var cost: Int { variants.reduce(0) { $0 + $1.cost } }

    /// A new entry with `response` first, replacing a variant with the same selecting values,
    /// keeping at most `limit` variants.
    func inserting(_ response: StoredResponse, limit: Int) -> StoredEntry {
        var kept = [response]
        for variant in variants where variant.varyValues != response.varyValues && kept.count < limit {
            kept.append(variant)
        }
        return StoredEntry(variants: kept)
    }

    /// A new entry with `old` replaced by `new` in place, or `nil` when `old` is no longer there.
    func replacing(_ old: StoredResponse, with new: StoredResponse) -> StoredEntry? {
        guard let index = variants.firstIndex(where: { $0 === old }) else { return nil }
        var updated = variants
        updated[index] = new
        return StoredEntry(variants: updated)
    }

    /// A new entry without `response`, or `nil` when none would remain.
    func removing(_ response: StoredResponse) -> StoredEntry? {
        let kept = variants.filter { $0 !== response }
        return kept.isEmpty ? nil : StoredEntry(variants: kept)
    }
}
