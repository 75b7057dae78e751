import Foundation
@testable import Stash

/// `FuzzKeyNormalisation`: the disk tier's key rules. The input is a key (UTF-8, invalid
/// sequences replaced).
///
/// Properties: the stored form is NFC, idempotent, and equal to the key as Swift compares strings
/// (so the disk tier agrees with the memory tier); an ASCII key is stored byte for byte; only the
/// empty key is invalid; a key's description stays short whatever the key's length.
package enum KeyNormalisationCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        let key = String(decoding: bytes, as: UTF8.self)
        let stored = KVStorage.storedKey(key)
        guard stored == key else { throw PropertyViolation("the stored form of \(key.debugDescription) is another string") }
        guard KVStorage.storedKey(stored).utf8.elementsEqual(stored.utf8) else {
            throw PropertyViolation("storedKey is not idempotent on \(key.debugDescription)")
        }
        guard stored.utf8.elementsEqual(stored.precomposedStringWithCanonicalMapping.utf8) else {
            throw PropertyViolation("the stored form of \(key.debugDescription) is not NFC")
        }
        if bytes.allSatisfy({ $0 < 0x80 }), !stored.utf8.elementsEqual(bytes) {
            throw PropertyViolation("an ASCII key is not stored as it is")
        }
        let isValid = (try? KVStorage.validate(key)) != nil
        guard isValid == !key.isEmpty else { throw PropertyViolation("validate(\(key.debugDescription)) is \(isValid)") }
        guard KVStorage.describe(key).count <= 64 + 40 else {
            throw PropertyViolation("a description of \(KVStorage.describe(key).count) characters")
        }
    }
}
