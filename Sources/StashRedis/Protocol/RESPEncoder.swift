import NIOCore

/// A channel handler stage that writes a ``RedisCommand`` as a RESP array of bulk strings.
///
/// Wrap it in `MessageToByteHandler`.
struct RESPEncoder: MessageToByteEncoder {
    typealias OutboundIn = RedisCommand

    func encode(data command: RedisCommand, out: inout ByteBuffer) throws {
        Self.write(command, into: &out)
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
