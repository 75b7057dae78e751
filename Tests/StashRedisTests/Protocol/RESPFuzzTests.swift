#if Redis
import NIOCore
import Testing
@testable import StashRedis
import StashTestSupport

extension RedisSuites {
    /// Seeded fuzzing of the parser: random well-formed replies must round-trip
    /// (against the reference encoder below), and random or mutated bytes must end
    /// in a value, a need for more bytes, or a ``RedisError``: never a crash, a hang
    /// or an allocation past the limits.
    @Suite(.timeLimit(.minutes(5))) struct RESPFuzzTests {
        private let parser = RESPParser(maximumBulkLength: 4096, maximumArrayCount: 256, maximumDepth: 8, maximumLineLength: 256)

        /// The reference model: RESP2 encoding of a value.
        static func encode(_ value: RESPValue, into out: inout [UInt8]) {
            switch value {
            case .simpleString(let s): out += Array("+\(s)\r\n".utf8)
            case .error(let s): out += Array("-\(s)\r\n".utf8)
            case .integer(let i): out += Array(":\(i)\r\n".utf8)
            case .bulkString(let b): out += Array("$\(b.readableBytes)\r\n".utf8) + Array(b.readableBytesView) + [13, 10]
            case .null: out += Array("$-1\r\n".utf8)
            case .array(let elements), .push(let elements):
                out += Array("*\(elements.count)\r\n".utf8)
                for element in elements { encode(element, into: &out) }
            }
        }

        /// The reference model for RESP3: an encoding of `value` that the parser must
        /// fold back into it, chosen at random among RESP3's forms for it (a double,
        /// a big number, a verbatim string, a blob error, a boolean, a set, a map, an
        /// attribute before it) and RESP2's.
        static func encodeRESP3(_ value: RESPValue, into out: inout [UInt8], _ random: inout SeededGenerator) {
            if Int.random(in: 0..<8, using: &random) == 0 {
                // Attributes, which the parser skips, before the value.
                out += Array("|1\r\n+ttl\r\n:\(Int.random(in: -9...9, using: &random))\r\n".utf8)
            }
            let form = Int.random(in: 0..<3, using: &random)
            switch value {
            case .simpleString(let s) where form > 0:
                out += Array("\(form == 1 ? "," : "(")\(s)\r\n".utf8)
            case .error(let s) where form > 0:
                out += Array("!\(s.utf8.count)\r\n\(s)\r\n".utf8)
            case .integer(1) where form > 0:
                out += Array("#t\r\n".utf8)
            case .bulkString(let b) where form > 0:
                out += Array("=\(b.readableBytes + 4)\r\ntxt:".utf8) + Array(b.readableBytesView) + [13, 10]
            case .null where form > 0:
                out += Array((form == 1 ? "_\r\n" : "#f\r\n").utf8)
            case .array(let elements) where form > 0:
                if form == 2, elements.count.isMultiple(of: 2) {
                    out += Array("%\(elements.count / 2)\r\n".utf8)
                } else {
                    out += Array("~\(elements.count)\r\n".utf8)
                }
                for element in elements { encodeRESP3(element, into: &out, &random) }
            case .push(let elements):
                out += Array(">\(elements.count)\r\n".utf8)
                for element in elements { encodeRESP3(element, into: &out, &random) }
            case .array(let elements):
                out += Array("*\(elements.count)\r\n".utf8)
                for element in elements { encodeRESP3(element, into: &out, &random) }
            default:
                encode(value, into: &out)
            }
        }

        static func randomValue(_ random: inout SeededGenerator, depth: Int = 0) -> RESPValue {
            switch Int.random(in: 0..<(depth < 3 ? 6 : 5), using: &random) {
            case 0: return .simpleString(String((0..<Int.random(in: 0..<8, using: &random)).map { _ in "abcxyz 01".randomElement(using: &random)! }))
            case 1: return .error("ERR " + String(Int.random(in: 0..<1000, using: &random)))
            case 2: return .integer(Int64.random(in: Int64.min + 1 ... Int64.max, using: &random))
            case 3: return .bulkString(ByteBuffer(bytes: (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
            case 4: return .null
            default: return .array((0..<Int.random(in: 0..<5, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
            }
        }

        /// Parses everything in `bytes`; returns the values, stopping at the first error or incomplete value.
        private func parseAll(_ bytes: [UInt8]) -> (values: [RESPValue], error: RedisError?) {
            var parser = self.parser
            var buffer = ByteBuffer(bytes: bytes)
            var values: [RESPValue] = []
            // Each parsed value consumes at least 3 bytes, so this loop is bounded.
            while buffer.readableBytes > 0 {
                do {
                    guard let value = try parser.parse(&buffer) else { break }
                    values.append(value)
                } catch {
                    return (values, error)
                }
            }
            return (values, nil)
        }

        /// Parses `bytes` as they would arrive in reads cut at random points: the values, or the first error.
        private func parseInRandomReads(_ bytes: [UInt8], _ random: inout SeededGenerator) -> (values: [RESPValue], error: RedisError?) {
            var parser = self.parser
            var buffer = ByteBuffer()
            var values: [RESPValue] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 1...24, using: &random))
                buffer.writeBytes(bytes[start..<end])
                start = end
                do {
                    while let value = try parser.parse(&buffer) { values.append(value) }
                } catch {
                    return (values, error)
                }
            }
            return (values, nil)
        }

        /// Parsing is independent of how the bytes are split into reads: the same values, or the same error.
        @Test func repliesSplitIntoRandomReadsParseAsOneRead() {
            var random = SeededGenerator(seed: 0x5EED_0025)
            for round in 0..<3000 {
                let values = (0..<Int.random(in: 1...4, using: &random)).map { _ in Self.randomValue(&random) }
                var wire: [UInt8] = []
                for value in values {
                    if round.isMultiple(of: 2) { Self.encode(value, into: &wire) } else { Self.encodeRESP3(value, into: &wire, &random) }
                }
                if round.isMultiple(of: 3), !wire.isEmpty {
                    wire[Int.random(in: 0..<wire.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                let whole = parseAll(wire)
                let split = parseInRandomReads(wire, &random)
                #expect(split.values == whole.values, "round \(round)")
                #expect(split.error?.code == whole.error?.code, "round \(round)")
            }
        }

        @Test func randomWellFormedRepliesRoundTrip() {
            var random = SeededGenerator(seed: 0x5EED_0017)
            for _ in 0..<2000 {
                let values = (0..<Int.random(in: 1...4, using: &random)).map { _ in Self.randomValue(&random) }
                var wire: [UInt8] = []
                for value in values { Self.encode(value, into: &wire) }
                let parsed = parseAll(wire)
                #expect(parsed.error == nil)
                #expect(parsed.values == values)
            }
        }

        @Test func randomWellFormedRESP3RepliesFoldIntoTheirValues() {
            var random = SeededGenerator(seed: 0x5EED_0003)
            for _ in 0..<2000 {
                // Out-of-band pushes among the replies.
                let values = (0..<Int.random(in: 1...4, using: &random)).map { _ -> RESPValue in
                    let value = Self.randomValue(&random)
                    if case .array(let elements) = value, Bool.random(using: &random) { return .push(elements) }
                    return value
                }
                var wire: [UInt8] = []
                for value in values { Self.encodeRESP3(value, into: &wire, &random) }
                let parsed = parseAll(wire)
                #expect(parsed.error == nil)
                #expect(parsed.values == values)
            }
        }

        @Test func mutatedRepliesNeverCrashAndFailWithAClearError() {
            var random = SeededGenerator(seed: 0xF022)
            var errors = 0
            for round in 0..<5000 {
                var wire: [UInt8] = []
                let value = Self.randomValue(&random)
                if round.isMultiple(of: 2) {
                    Self.encode(value, into: &wire)
                } else {
                    Self.encodeRESP3(value, into: &wire, &random)
                }
                for _ in 0..<Int.random(in: 1...4, using: &random) where !wire.isEmpty {
                    let index = Int.random(in: 0..<wire.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: wire[index] = UInt8.random(in: 0...255, using: &random)
                    case 1: wire.remove(at: index)
                    case 2: wire.insert(UInt8.random(in: 0...255, using: &random), at: index)
                    default: wire.insert(contentsOf: Array("999999999".utf8), at: index)
                    }
                }
                let parsed = parseAll(wire)
                if let error = parsed.error {
                    errors += 1
                    #expect([.protocolViolation, .replyTooLarge].contains(error.code), "\(error)")
                    #expect(!error.message.isEmpty)
                }
            }
            #expect(errors > 1000, "mutations should mostly be caught")
        }

        @Test func randomBytesNeverCrash() {
            var random = SeededGenerator(seed: 42)
            let alphabet = Array("+-:$*_#,(=!%~>|\r\n0123456789-abtf".utf8)
            for _ in 0..<5000 {
                let bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                    Bool.random(using: &random) ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
                }
                let parsed = parseAll(bytes)
                if let error = parsed.error {
                    #expect([.protocolViolation, .replyTooLarge].contains(error.code), "\(error)")
                }
            }
        }
    }
}
#endif  // Redis
