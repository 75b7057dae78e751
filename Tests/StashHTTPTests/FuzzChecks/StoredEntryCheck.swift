import HTTPTypes
@testable import StashHTTP

/// `FuzzStoredEntry`: the disk tier's record of an HTTP entry (`SHC1`).
///
/// The input is read two ways. As a record: `decode` returns an entry or `nil` (damaged data is a
/// miss), and an entry it returns survives another round trip unchanged (the input itself need
/// not come back byte for byte: decoding normalises a field value's invalid characters, and any
/// "present" byte but 1 to an absent `Vary` value). As
/// the parts of an entry (``FuzzedExchange`` gives the layout): the entry built from them
/// survives `decode(encode(x)) == x`.
package enum StoredEntryCheck {
    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        if let entry = HTTPCacheEntry.decode(bytes) {
            guard let encoded = entry.encoded(), let again = HTTPCacheEntry.decode(encoded), same(again, entry) else {
                throw PropertyViolation("a decoded entry does not survive decode(encode(x))")
            }
        }
        let exchange = FuzzedExchange(bytes)
        let response = exchange.storedResponse()
        let body = Array(bytes.suffix(Int(bytes.first ?? 0)))
        let variant = StoredResponse(
            status: HTTPResponse.Status(code: response.status.code, reasonPhrase: exchange.request.headerFields[.userAgent] ?? ""),
            fields: response.fields, requestTime: response.requestTime, responseTime: response.responseTime,
            varyValues: response.varyValues, body: body)
        let entry = HTTPCacheEntry(variants: [variant, response])
        guard let encoded = entry.encoded(), let decoded = HTTPCacheEntry.decode(encoded) else {
            throw PropertyViolation("an encoded entry does not decode")
        }
        guard same(decoded, entry) else { throw PropertyViolation("decode(encode(x)) != x") }
    }

    static func same(_ a: HTTPCacheEntry, _ b: HTTPCacheEntry) -> Bool {
        a.variants.count == b.variants.count && zip(a.variants, b.variants).allSatisfy { same($0, $1) }
    }

    static func same(_ a: StoredResponse, _ b: StoredResponse) -> Bool {
        a.status.code == b.status.code && a.status.reasonPhrase == b.status.reasonPhrase && a.fields == b.fields
            && a.requestTime == b.requestTime && a.responseTime == b.responseTime && a.varyValues == b.varyValues
            && a.body == b.body
    }
}
