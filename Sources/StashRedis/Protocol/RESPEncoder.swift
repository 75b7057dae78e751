import NIOCore

/// Writes ``RedisCommand``s as RESP arrays of bulk strings.
///
/// Commands are encoded by the task that sends them, before they reach the
/// connection's event loop, and a caller's pipeline goes out as one buffer.
enum RESPEncoder {
    /// `commands` in RESP, one after the other, in one buffer sized up front.
    ///
    /// - Complexity: O(n) in the commands' encoded size; one allocation.
    static func encode(_ commands: some Collection<RedisCommand>, allocator: ByteBufferAllocator) -> ByteBuffer {
        var capacity = 0
        for command in commands { capacity += maximumEncodedSize(of: command) }
        var out = allocator.buffer(capacity: capacity)
        for command in commands { write(command, into: &out) }
        return out
    }

    /// Appends `command` to `out` in RESP.
    ///
    /// - Complexity: O(n) in the command's encoded size.
    static func write(_ command: RedisCommand, into out: inout ByteBuffer) {
        out.writeInteger(UInt8(ascii: "*"))
        writeDecimal(command.arguments.count + 1, into: &out)
        writeBulk(string: command.name, into: &out)
        for argument in command.arguments {
            switch argument {
            case .string(let string):
                writeBulk(string: string, into: &out)
            case .bytes(var bytes):
                out.writeInteger(UInt8(ascii: "$"))
                writeDecimal(bytes.readableBytes, into: &out)
                out.writeBuffer(&bytes)
                out.writeStaticString("\r\n")
            case .integer(let value):
                writeBulk(string: String(value), into: &out)
            }
        }
    }

    /// An upper bound of `command`'s encoded size: each element's header
    /// (`$`, at most 20 digits, CRLF) and trailing CRLF take at most 25 bytes.
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

    private static func writeBulk(string: String, into out: inout ByteBuffer) {
        out.writeInteger(UInt8(ascii: "$"))
        writeDecimal(string.utf8.count, into: &out)
        out.writeString(string)
        out.writeStaticString("\r\n")
    }

    private static func writeDecimal(_ value: Int, into out: inout ByteBuffer) {
        if value < 10 {
            out.writeInteger(UInt8(ascii: "0") + UInt8(value))
        } else {
            out.writeString(String(value))
        }
        out.writeStaticString("\r\n")
    }
}
