#if Redis
import NIOCore

/// Writes ``RedisCommand``s as RESP arrays of bulk strings.
///
/// Commands are encoded by the task that sends them, before they reach the
/// connection's event loop, and a caller's pipeline goes out as one buffer.
/// Each command is written through one raw pointer into space reserved for its
/// largest possible size, rather than one buffer call per token.
enum RESPEncoder {
    /// `commands` in RESP, one after the other, in one buffer sized up front.
    ///
    /// - Complexity: O(n) in the commands' encoded size; one allocation.
    static func encode(_ commands: some Collection<RedisCommand>, allocator: ByteBufferAllocator) -> ByteBuffer {
        var capacity = 0
        for command in commands { capacity += maximumEncodedSize(of: command) }
        var out = allocator.buffer(capacity: capacity)
        out.writeWithUnsafeMutableBytes(minimumWritableBytes: capacity) { space in
            var writer = Writer(space: space)
            for command in commands { writer.write(command) }
            return writer.count
        }
        return out
    }

    /// Appends `command` to `out` in RESP.
    ///
    /// - Complexity: O(n) in the command's encoded size.
    static func write(_ command: RedisCommand, into out: inout ByteBuffer) {
        out.writeWithUnsafeMutableBytes(minimumWritableBytes: maximumEncodedSize(of: command)) { space in
            var writer = Writer(space: space)
            writer.write(command)
            return writer.count
        }
    }

    /// An upper bound of `command`'s encoded size: the array header (`*`, at most
    /// 20 digits, CRLF) takes at most 23 bytes, and each element's header (`$`,
    /// digits, CRLF) and trailing CRLF at most 25 bytes around its content.
    private static func maximumEncodedSize(of command: RedisCommand) -> Int {
        var size = 23 + 25 + command.name.utf8.count
        for argument in command.arguments {
            switch argument {
            case .string(let string): size += 25 + string.utf8.count
            case .bytes(let bytes): size += 25 + bytes.readableBytes
            case .integer: size += 25 + 20
            }
        }
        return size
    }

    /// Writes into reserved space that ``maximumEncodedSize(of:)`` bounds.
    private struct Writer {
        let space: UnsafeMutableRawBufferPointer
        var count = 0

        mutating func write(_ command: RedisCommand) {
            byte(UInt8(ascii: "*"))
            decimalLine(UInt64(command.arguments.count + 1))
            bulk(command.name)
            for argument in command.arguments {
                switch argument {
                case .string(let string):
                    bulk(string)
                case .bytes(let buffer):
                    byte(UInt8(ascii: "$"))
                    decimalLine(UInt64(buffer.readableBytes))
                    buffer.withUnsafeReadableBytes { copy($0) }
                    crlf()
                case .integer(let value):
                    let digits = Self.digitCount(value.magnitude)
                    byte(UInt8(ascii: "$"))
                    decimalLine(UInt64(digits + (value < 0 ? 1 : 0)))
                    if value < 0 { byte(UInt8(ascii: "-")) }
                    decimal(value.magnitude, digits: digits)
                    crlf()
                }
            }
        }

        private mutating func bulk(_ string: String) {
            var string = string
            string.withUTF8 { utf8 in
                byte(UInt8(ascii: "$"))
                decimalLine(UInt64(utf8.count))
                copy(UnsafeRawBufferPointer(utf8))
                crlf()
            }
        }

        private mutating func byte(_ value: UInt8) {
            space[count] = value
            count += 1
        }

        private mutating func crlf() {
            space[count] = UInt8(ascii: "\r")
            space[count + 1] = UInt8(ascii: "\n")
            count += 2
        }

        private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, bytes.count > 0 else { return }
            (space.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
            count += bytes.count
        }

        private mutating func decimalLine(_ value: UInt64) {
            decimal(value, digits: Self.digitCount(value))
            crlf()
        }

        private mutating func decimal(_ value: UInt64, digits: Int) {
            var rest = value
            var index = count + digits
            repeat {
                index -= 1
                space[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            count += digits
        }

        private static func digitCount(_ value: UInt64) -> Int {
            var digits = 1
            var rest = value
            while rest >= 10 {
                rest /= 10
                digits += 1
            }
            return digits
        }
    }
}
#endif  // Redis
