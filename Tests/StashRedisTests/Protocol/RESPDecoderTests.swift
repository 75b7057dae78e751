#if Redis
import NIOCore
import NIOEmbedded
import Testing
@testable import StashRedis

extension RedisSuites {
    @Suite(.timeLimit(.minutes(5))) struct RESPDecoderTests {
        /// Replies of every type, with the value each must decode to.
        static let samples: [(String, RESPValue)] = [
            ("+OK\r\n", .simpleString("OK")),
            ("-ERR unknown command\r\n", .error("ERR unknown command")),
            (":0\r\n", .integer(0)),
            (":-42\r\n", .integer(-42)),
            (":9223372036854775807\r\n", .integer(.max)),
            ("$5\r\nhello\r\n", .bulkString(ByteBuffer(string: "hello"))),
            ("$0\r\n\r\n", .bulkString(ByteBuffer())),
            ("$6\r\na\r\nb\r\n\r\n", .bulkString(ByteBuffer(string: "a\r\nb\r\n"))),
            ("$-1\r\n", .null),
            ("*-1\r\n", .null),
            ("*0\r\n", .array([])),
            ("*2\r\n$3\r\nfoo\r\n:7\r\n", .array([.bulkString(ByteBuffer(string: "foo")), .integer(7)])),
            ("*2\r\n*1\r\n+a\r\n*0\r\n", .array([.array([.simpleString("a")]), .array([])])),
            ("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n",
             .array([.bulkString(ByteBuffer(string: "message")), .bulkString(ByteBuffer(string: "ch")), .bulkString(ByteBuffer(string: "x"))])),
            // RESP3, folded into the RESP2 cases.
            ("_\r\n", .null),
            ("#t\r\n", .integer(1)),
            ("#f\r\n", .null),
            (",3.5\r\n", .simpleString("3.5")),
            (",-inf\r\n", .simpleString("-inf")),
            ("(3492890328409238509324850943850943825024385\r\n", .simpleString("3492890328409238509324850943850943825024385")),
            ("%0\r\n", .array([])),
            ("|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*1\r\n:2\r\n", .array([.integer(2)])),
            ("*2\r\n|1\r\n+ttl\r\n:3\r\n+a\r\n_\r\n", .array([.simpleString("a"), .null])),
            (">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n",
             .push([.bulkString(ByteBuffer(string: "message")), .bulkString(ByteBuffer(string: "ch")), .bulkString(ByteBuffer(string: "x"))])),
            ("%1\r\n+k\r\n:1\r\n", .array([.simpleString("k"), .integer(1)])),
            ("~1\r\n:1\r\n", .array([.integer(1)])),
            (">2\r\n+a\r\n+b\r\n", .push([.simpleString("a"), .simpleString("b")])),
            ("=7\r\ntxt:abc\r\n", .bulkString(ByteBuffer(string: "abc"))),
            ("!5\r\noops!\r\n", .error("oops!")),
        ]

        private func makeChannel(_ parser: RESPParser = RESPParser()) -> EmbeddedChannel {
            EmbeddedChannel(handler: ByteToMessageHandler(RESPDecoder(parser: parser)))
        }

        @Test func everySampleDecodesWhole() throws {
            for (wire, expected) in Self.samples {
                let channel = makeChannel()
                try channel.writeInbound(ByteBuffer(string: wire))
                #expect(try channel.readInbound(as: RESPValue.self) == expected, "\(wire.debugDescription)")
                #expect(try channel.readInbound(as: RESPValue.self) == nil)
                #expect(try channel.finish().isClean)
            }
        }

        /// Given all samples back to back, split into two writes at every byte offset,
        /// the decoder yields exactly the samples in order.
        @Test func aReplySplitAtEveryOffsetDecodesTheSame() throws {
            let wire = Self.samples.map(\.0).joined()
            let expected = Self.samples.map(\.1)
            let bytes = Array(wire.utf8)
            for split in 0...bytes.count {
                let channel = makeChannel()
                try channel.writeInbound(ByteBuffer(bytes: bytes[..<split]))
                try channel.writeInbound(ByteBuffer(bytes: bytes[split...]))
                var decoded: [RESPValue] = []
                while let value = try channel.readInbound(as: RESPValue.self) { decoded.append(value) }
                #expect(decoded == expected, "split at \(split)")
                #expect(try channel.finish().isClean)
            }
        }

        @Test func oneByteAtATimeDecodesTheSame() throws {
            let channel = makeChannel()
            for byte in Self.samples.map(\.0).joined().utf8 {
                try channel.writeInbound(ByteBuffer(bytes: [byte]))
            }
            var decoded: [RESPValue] = []
            while let value = try channel.readInbound(as: RESPValue.self) { decoded.append(value) }
            #expect(decoded == Self.samples.map(\.1))
        }

        @Test func malformedRepliesThrowProtocolViolation() {
            let malformed = ["?x\r\n", ":12a\r\n", ":\r\n", "$3\r\nabcX\r\n", "$-5\r\n", "*-2\r\n", "+a\rb\r\n",
                             ":99999999999999999999\r\n", "#x\r\n", "_x\r\n", "=2\r\nab\r\n",
                             "#\r\n", "#tt\r\n", "%-1\r\n", "~-1\r\n", ">-1\r\n", "|-1\r\n", "!-1\r\n", "=-1\r\n"]
            for wire in malformed {
                var parser = RESPParser()
                var buffer = ByteBuffer(string: wire)
                let error = #expect(throws: (any Error).self, "\(wire.debugDescription)") { try parser.parse(&buffer) }
                #expect((error as? RedisError)?.code == .protocolViolation, "\(wire.debugDescription): \(error.map { "\($0)" } ?? "-")")
            }
        }

        @Test func announcedLengthsOverTheLimitsThrowBeforeTheBytesArrive() {
            var parser = RESPParser(maximumBulkLength: 100, maximumArrayCount: 10)
            for wire in ["$101\r\n", "$9223372036854775807\r\n", "*11\r\n", "%6\r\n", "|6\r\n", "=101\r\n", ">11\r\n"] {
                var buffer = ByteBuffer(string: wire)
                let error = #expect(throws: (any Error).self, "\(wire.debugDescription)") { try parser.parse(&buffer) }
                #expect((error as? RedisError)?.code == .replyTooLarge)
            }
        }

        @Test func aLineWithoutCRLFPastTheLimitThrowsInsteadOfWaiting() {
            var parser = RESPParser(maximumLineLength: 16)
            var buffer = ByteBuffer(string: "+" + String(repeating: "a", count: 40))
            #expect(throws: (any Error).self) { try parser.parse(&buffer) }
            var integer = ByteBuffer(string: ":" + String(repeating: "1", count: 30))
            #expect(throws: (any Error).self) { try parser.parse(&integer) }
        }

        @Test func nestingDeeperThanTheLimitThrows() {
            var parser = RESPParser(maximumDepth: 4)
            var buffer = ByteBuffer(string: String(repeating: "*1\r\n", count: 6) + ":1\r\n")
            #expect(throws: (any Error).self) { try parser.parse(&buffer) }
            // Attributes before attributes count as nesting too.
            var attributes = ByteBuffer(string: String(repeating: "|0\r\n", count: 6) + ":1\r\n")
            #expect(throws: (any Error).self) { try parser.parse(&attributes) }
        }

        @Test func anIncompleteScalarConsumesNothing() throws {
            var parser = RESPParser()
            var buffer = ByteBuffer(string: "$10\r\nabc")
            #expect(try parser.parse(&buffer) == nil)
            #expect(buffer.readerIndex == 0)
            #expect(!parser.isInsideValue)
        }

        /// The regression test of the quadratic decoder (issue #25): an aggregate's complete elements
        /// are consumed as they arrive and kept in the parser, so the next read starts where this one
        /// stopped instead of at the reply's first byte.
        @Test func anIncompleteAggregateConsumesItsCompleteElements() throws {
            var parser = RESPParser()
            var buffer = ByteBuffer(string: "*3\r\n$3\r\nfoo\r\n*2\r\n:1\r\n$3\r\nba")
            #expect(try parser.parse(&buffer) == nil)
            // "*3", "foo", "*2" and ":1" are consumed; the bulk string that has not arrived is not.
            #expect(buffer.readerIndex == "*3\r\n$3\r\nfoo\r\n*2\r\n:1\r\n".utf8.count)
            #expect(parser.isInsideValue)
            buffer.writeString("r\r\n+x\r\n")
            let value = try parser.parse(&buffer)
            #expect(value == .array([
                .bulkString(ByteBuffer(string: "foo")),
                .array([.integer(1), .bulkString(ByteBuffer(string: "bar"))]),
                .simpleString("x"),
            ]))
            #expect(!parser.isInsideValue)
            #expect(buffer.readableBytes == 0)
        }

        /// A large array arriving in 1 KB reads, as a big `MGET` reply does, decodes to the value one
        /// read of the whole reply gives, and each read consumes what it completes.
        @Test func aLargeArrayInSmallReadsDecodesAsOneRead() throws {
            let element = "$100\r\n" + String(repeating: "v", count: 100) + "\r\n"
            let wire = Array(("*10000\r\n" + String(repeating: element, count: 10_000)).utf8)
            var whole = ByteBuffer(bytes: wire)
            var oneRead = RESPParser()
            let expected = try #require(try oneRead.parse(&whole))
            var parser = RESPParser()
            var buffer = ByteBuffer()
            var decoded: RESPValue?
            for start in stride(from: 0, to: wire.count, by: 1024) {
                buffer.writeBytes(wire[start..<min(start + 1024, wire.count)])
                #expect(decoded == nil, "the value was complete before its last byte arrived")
                decoded = try parser.parse(&buffer)
                // Unconsumed bytes never exceed one element and the next read.
                #expect(buffer.readableBytes < element.utf8.count + 1024)
            }
            #expect(decoded == expected)
        }

        @Test func aParserThatThrewStartsAfresh() throws {
            var parser = RESPParser()
            var bad = ByteBuffer(string: "*2\r\n:1\r\n?x\r\n")
            #expect(throws: (any Error).self) { try parser.parse(&bad) }
            #expect(!parser.isInsideValue)
            var good = ByteBuffer(string: ":5\r\n")
            #expect(try parser.parse(&good) == .integer(5))
        }

        @Test func aTruncatedAggregateAtCloseIsAnErrorEvenWhenTheBufferIsEmpty() throws {
            let channel = makeChannel()
            try channel.writeInbound(ByteBuffer(string: "*2\r\n$3\r\nfoo\r\n"))
            #expect(try channel.readInbound(as: RESPValue.self) == nil)
            let error = #expect(throws: (any Error).self) { try channel.finish() }
            #expect((error as? RedisError)?.code == .protocolViolation)
        }

        @Test func aTruncatedReplyAtCloseIsAnError() throws {
            let channel = makeChannel()
            try channel.writeInbound(ByteBuffer(string: "$10\r\nabc"))
            let error = #expect(throws: (any Error).self) { try channel.finish() }
            #expect((error as? RedisError)?.code == .protocolViolation)
        }

        @Test func theEncoderWritesAnArrayOfBulkStrings() {
            var out = ByteBuffer()
            RESPEncoder.write(RedisCommand("SET", key: "k", ["k", .bytes(ByteBuffer(string: "v\r\n")), "PX", .integer(1500)]), into: &out)
            #expect(String(buffer: out) == "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n$2\r\nPX\r\n$4\r\n1500\r\n")
        }

        /// Many commands in one buffer: empty, non-ASCII and long arguments, negative and extreme
        /// integers, and lengths of many digits, each as a plain reference encoding writes it.
        @Test func theEncoderWritesAPipelineInOneBuffer() {
            let long = String(repeating: "x", count: 12_345)
            let commands = [
                RedisCommand("GET", key: "", [""]),
                RedisCommand("SET", key: "clé", ["clé", .bytes(ByteBuffer(bytes: [0, 13, 10, 255])), "PX", .integer(-7)]),
                RedisCommand("ECHO", [.string(long), .integer(Int64.min), .integer(Int64.max), .integer(0), .bytes(ByteBuffer())]),
            ]
            func reference(_ command: RedisCommand) -> [UInt8] {
                var elements: [[UInt8]] = [Array(command.name.utf8)]
                for argument in command.arguments {
                    switch argument {
                    case .string(let string): elements.append(Array(string.utf8))
                    case .bytes(let bytes): elements.append(Array(bytes.readableBytesView))
                    case .integer(let value): elements.append(Array(String(value).utf8))
                    }
                }
                var out = Array("*\(elements.count)\r\n".utf8)
                for element in elements { out += Array("$\(element.count)\r\n".utf8) + element + Array("\r\n".utf8) }
                return out
            }
            let encoded = RESPEncoder.encode(commands, allocator: ByteBufferAllocator())
            #expect(Array(encoded.readableBytesView) == commands.flatMap(reference))
        }
    }
}
#endif  // Redis
