#if Redis
import NIOCore
@testable import StashRedis

/// `FuzzRESP`: the RESP2/RESP3 parser on a fuzzed byte stream. The first byte seeds the split
/// points; the rest is the stream.
///
/// Properties: the values parsed, and how the stream ends (complete, incomplete, or the error's
/// code), are the same whether the bytes arrive at once, one at a time (inputs up to 256 bytes),
/// or in chunks of fuzzed sizes (1 to 64 bytes); every value parsed, written back as RESP, parses to itself.
package enum RESPCheck {
    /// How a stream ended.
    enum End: Equatable {
        case complete
        case incomplete
        case failed(RedisError.Code)
    }

    /// Limits small enough for the fuzzer to reach.
    static func makeParser() -> RESPParser {
        RESPParser(maximumBulkLength: 4096, maximumArrayCount: 256, maximumDepth: 8, maximumLineLength: 256)
    }

    package static func check(_ bytes: [UInt8]) throws(PropertyViolation) {
        guard let seed = bytes.first else { return }
        let stream = Array(bytes.dropFirst())
        let whole = parse(stream, chunkSizes: { stream.count })
        // One byte at a time costs a parse call per byte: for the shorter inputs, where most
        // edge cases are anyway; the fuzzed splits below cover the longer ones.
        let byByte = stream.count <= 256 ? parse(stream, chunkSizes: { 1 }) : whole
        var state = UInt32(seed) &* 2_654_435_761 | 1
        let fuzzed = parse(stream) {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            return Int(state % 64) + 1
        }
        guard whole == byByte, whole == fuzzed else {
            throw PropertyViolation("split-dependent: whole \(whole), byte by byte \(byByte), fuzzed splits \(fuzzed)")
        }
        var roomy = RESPParser(maximumBulkLength: 1 << 20, maximumArrayCount: 1 << 12, maximumDepth: 8, maximumLineLength: 1 << 20)
        for value in whole.0 {
            var buffer = ByteBuffer()
            encode(value, into: &buffer)
            let written = buffer
            do {
                guard let again = try roomy.parse(&buffer), again == value, buffer.readableBytes == 0 else {
                    throw PropertyViolation("\(value) written as \(String(buffer: written).debugDescription) parses to something else")
                }
            } catch let error as RedisError {
                throw PropertyViolation("\(value) written as \(String(buffer: written).debugDescription) fails: \(error)")
            } catch {
                throw error as! PropertyViolation
            }
        }
    }

    static func parse(_ stream: [UInt8], chunkSizes next: () -> Int) -> ([RESPValue], End) {
        var parser = makeParser()
        var buffer = ByteBuffer()
        var values: [RESPValue] = []
        var offset = 0
        repeat {
            let end = min(stream.count, offset + max(1, next()))
            buffer.writeBytes(stream[offset..<end])
            offset = end
            do {
                while let value = try parser.parse(&buffer) { values.append(value) }
            } catch {
                return (values, .failed(error.code))
            }
        } while offset < stream.count
        return (values, buffer.readableBytes == 0 && !parser.isInsideValue ? .complete : .incomplete)
    }

    /// `value` as RESP3 writes it (a blob error keeps any CR and LF in an error's text).
    static func encode(_ value: RESPValue, into buffer: inout ByteBuffer) {
        switch value {
        case .simpleString(let text): buffer.writeString("+\(text)\r\n")
        case .error(let text):
            buffer.writeString("!\(text.utf8.count)\r\n")
            buffer.writeString(text)
            buffer.writeString("\r\n")
        case .integer(let number): buffer.writeString(":\(number)\r\n")
        case .bulkString(let bytes):
            buffer.writeString("$\(bytes.readableBytes)\r\n")
            buffer.writeImmutableBuffer(bytes)
            buffer.writeString("\r\n")
        case .null: buffer.writeString("_\r\n")
        case .array(let elements), .push(let elements):
            buffer.writeString("\(value.isPush ? ">" : "*")\(elements.count)\r\n")
            for element in elements { encode(element, into: &buffer) }
        }
    }
}

extension RESPValue {
    var isPush: Bool { if case .push = self { true } else { false } }
}
#endif  // Redis
