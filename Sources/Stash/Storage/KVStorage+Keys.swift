import Foundation

// The key rules of the disk engine, in one place: the form a key is stored in,
// which keys are valid, and how a key appears in messages.

extension KVStorage {
    /// The form in which `key` is stored: its NFC normalisation.
    ///
    /// Swift's `String` compares canonically equivalent spellings as equal
    /// (precomposed "é" and "e" + U+0301 are the same string), and so does
    /// ``MemoryCache``; SQLite compares bytes. Storing every key in one
    /// canonical form makes the disk tier agree with Swift, and the tiers of a
    /// ``Cache`` agree with each other. ``DiskCache`` applies it to every key
    /// before it reaches the storage (the storage itself compares exact bytes).
    /// ASCII keys, already in that form, are passed through without a copy.
    ///
    /// - Complexity: O(1) for an empty key; O(k) in the key's UTF-8 length otherwise.
    static func storedKey(_ key: String) -> String {
        // Over the contiguous bytes (always there for native and small strings): a
        // tight loop, where the UTF8View's iterator costs ~75 instructions a byte.
        let isASCII = key.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0x80 } }
            ?? key.utf8.allSatisfy { $0 < 0x80 }
        if isASCII {
            return key
        }
        return key.precomposedStringWithCanonicalMapping
    }

    /// Throws ``StashError/Code/invalidKey`` for an empty key: the only key the
    /// disk tier refuses (file names never derive from keys).
    static func validate(_ key: String) throws(StashError) {
        if key.isEmpty {
            throw StashError(.invalidKey, "keys must not be empty")
        }
    }

    /// A key shortened for messages: keys may be megabytes long.
    static func describe(_ key: String) -> String {
        let limit = 64
        if key.utf8.count <= limit { return "\"\(key)\"" }
        return "\"\(key.prefix(limit))…\" (\(key.utf8.count) bytes)"
    }
}
