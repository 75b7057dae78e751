import Foundation

extension DiskCache {
    /// The form in which `key` is stored: its NFC normalisation.
    ///
    /// Swift's `String` compares canonically equivalent spellings as equal
    /// (precomposed "é" and "e" + U+0301 are the same string), and so does
    /// ``MemoryCache``; SQLite compares bytes. Storing every key in one
    /// canonical form makes the disk tier agree with Swift, and the tiers of a
    /// ``Cache`` agree with each other. ASCII keys, already in that form, are
    /// passed through without a copy.
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
}
