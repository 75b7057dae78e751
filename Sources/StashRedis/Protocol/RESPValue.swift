#if Redis
import NIOCore

/// One reply, or one element of a reply, in the Redis serialization protocol.
///
/// RESP2 types map one to one. The RESP3 types, which a connection speaks when
/// the server accepts `HELLO 3`, are folded into them, so that a reply reads the
/// same under both protocols: a map or a set becomes an ``array(_:)`` of its
/// elements (a map's keys and values alternating, as RESP2 sends them), a
/// boolean true ``integer(_:)`` 1 and false ``null`` (as RESP2 sends a Lua
/// script's booleans), a double or a big number a ``simpleString(_:)`` of its
/// text, a verbatim string a ``bulkString(_:)`` without its format prefix, a
/// blob error an ``error(_:)``; attributes are dropped. Only ``push(_:)`` stays
/// distinct, so that pub/sub messages can be told from replies.
///
/// Thread-safety: a value type, `Sendable`.
package enum RESPValue: Sendable, Hashable {
    /// A simple string (`+OK`).
    case simpleString(String)
    /// An error reply (`-ERR message`), its text without the leading `-`.
    case error(String)
    /// An integer (`:42`).
    case integer(Int64)
    /// A bulk string: arbitrary bytes.
    case bulkString(ByteBuffer)
    /// A null bulk string or null array (RESP2 `$-1`/`*-1`, RESP3 `_`).
    case null
    /// An array of values.
    case array([RESPValue])
    /// A RESP3 out-of-band push (`>`), such as a pub/sub message.
    case push([RESPValue])

    /// The bytes of a bulk or simple string, or `nil` for any other type.
    package var bytes: ByteBuffer? {
        switch self {
        case .bulkString(let buffer): return buffer
        case .simpleString(let string): return ByteBuffer(string: string)
        default: return nil
        }
    }

    /// The text of a bulk or simple string decoded as UTF-8, or `nil` for any other type.
    package var string: String? {
        switch self {
        case .bulkString(let buffer): return String(buffer: buffer)
        case .simpleString(let string): return string
        default: return nil
        }
    }

    /// The integer value, or `nil` when this is not an integer.
    package var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The elements of an array or push, or `nil` for any other type.
    package var elements: [RESPValue]? {
        switch self {
        case .array(let values), .push(let values): return values
        default: return nil
        }
    }
}
#endif  // Redis
