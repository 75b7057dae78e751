import NIOCore

/// Parses one RESP2 or RESP3 value from the front of a buffer, consuming it
/// only when the whole value is there. RESP3 types are folded into RESP2's as
/// ``RESPValue`` says; RESP3 attributes are skipped.
///
/// Incremental by re-parsing: an incomplete value leaves the buffer untouched and
/// returns `nil`, and the next call starts over from the same byte. Every length
/// the peer announces is checked against a limit before anything is allocated
/// or awaited, so a hostile or broken server can make it throw but never make it
/// allocate more than ``maximumBulkLength`` for one string, wait for a line longer
/// than ``maximumLineLength``, or recurse deeper than ``maximumDepth``.
///
/// Thread-safety: a value type with no shared state.
struct RESPParser: Sendable {
    /// The largest bulk string accepted, in bytes.
    var maximumBulkLength: Int
    /// The largest array accepted, in elements.
    var maximumArrayCount: Int
    /// The deepest nesting of arrays accepted.
    var maximumDepth: Int
    /// The longest simple string, error or header line accepted, in bytes.
    var maximumLineLength: Int

    init(maximumBulkLength: Int = 512 * 1024 * 1024, maximumArrayCount: Int = 1 << 24,
         maximumDepth: Int = 32, maximumLineLength: Int = 64 * 1024) {
        self.maximumBulkLength = maximumBulkLength
        self.maximumArrayCount = maximumArrayCount
        self.maximumDepth = maximumDepth
        self.maximumLineLength = maximumLineLength
    }

    /// Parses one value, consuming its bytes; `nil` (nothing consumed) when more bytes are needed.
    ///
    /// - Throws: ``RedisError`` `.protocolViolation` for malformed input,
    ///   `.replyTooLarge` for a length over a limit.
    func parse(_ buffer: inout ByteBuffer) throws(RedisError) -> RESPValue? {
        var offset = buffer.readerIndex
        guard let value = try parseValue(buffer, at: &offset, depth: 0) else { return nil }
        buffer.moveReaderIndex(to: offset)
        return value
    }

    private func parseValue(_ buffer: ByteBuffer, at offset: inout Int, depth: Int) throws(RedisError) -> RESPValue? {
        guard let type = buffer.getInteger(at: offset, as: UInt8.self) else { return nil }
        var cursor = offset + 1
        let value: RESPValue
        switch type {
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "("), UInt8(ascii: ","):
            guard let line = try readLine(buffer, at: &cursor, limit: maximumLineLength) else { return nil }
            let text = buffer.getString(at: line.lowerBound, length: line.count) ?? ""
            value = type == UInt8(ascii: "-") ? .error(text) : .simpleString(text)
        case UInt8(ascii: ":"):
            guard let number = try readInteger(buffer, at: &cursor) else { return nil }
            value = .integer(number)
        case UInt8(ascii: "#"):
            guard let line = try readLine(buffer, at: &cursor, limit: 1) else { return nil }
            // As RESP2 sends a script's Lua booleans: true as 1, false as a null.
            switch line.isEmpty ? nil : buffer.getInteger(at: line.lowerBound, as: UInt8.self) {
            case UInt8(ascii: "t"): value = .integer(1)
            case UInt8(ascii: "f"): value = .null
            default: throw RedisError(.protocolViolation, "a RESP3 boolean is neither t nor f")
            }
        case UInt8(ascii: "_"):
            guard let line = try readLine(buffer, at: &cursor, limit: 0) else { return nil }
            guard line.isEmpty else { throw RedisError(.protocolViolation, "a RESP3 null carries bytes") }
            value = .null
        case UInt8(ascii: "$"), UInt8(ascii: "="), UInt8(ascii: "!"):
            guard let length = try readInteger(buffer, at: &cursor) else { return nil }
            if length == -1 && type == UInt8(ascii: "$") {
                value = .null
                break
            }
            guard length >= 0 else { throw RedisError(.protocolViolation, "a bulk string announces length \(length)") }
            guard length <= maximumBulkLength else {
                throw RedisError(.replyTooLarge, "a bulk string announces \(length) bytes, over the limit of \(maximumBulkLength)")
            }
            let count = Int(length)
            guard buffer.writerIndex - cursor >= count + 2 else { return nil }
            guard buffer.getInteger(at: cursor + count, as: UInt8.self) == UInt8(ascii: "\r"),
                  buffer.getInteger(at: cursor + count + 1, as: UInt8.self) == UInt8(ascii: "\n") else {
                throw RedisError(.protocolViolation, "a bulk string of \(count) bytes is not followed by CRLF")
            }
            let slice = buffer.getSlice(at: cursor, length: count)!
            cursor += count + 2
            switch type {
            case UInt8(ascii: "!"): value = .error(String(buffer: slice))
            case UInt8(ascii: "="):
                // A verbatim string starts with a three-letter format and a colon.
                guard count >= 4 else { throw RedisError(.protocolViolation, "a verbatim string lacks its format prefix") }
                value = .bulkString(slice.getSlice(at: slice.readerIndex + 4, length: count - 4)!)
            default: value = .bulkString(slice)
            }
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "%"), UInt8(ascii: "|"):
            guard let announced = try readInteger(buffer, at: &cursor) else { return nil }
            if announced == -1 && type == UInt8(ascii: "*") {
                value = .null
                break
            }
            guard announced >= 0 else { throw RedisError(.protocolViolation, "an aggregate announces \(announced) elements") }
            let multiplier: Int64 = type == UInt8(ascii: "%") || type == UInt8(ascii: "|") ? 2 : 1
            let (count64, overflow) = announced.multipliedReportingOverflow(by: multiplier)
            guard !overflow, count64 <= maximumArrayCount else {
                throw RedisError(.replyTooLarge, "an aggregate announces \(announced) elements, over the limit of \(maximumArrayCount)")
            }
            guard depth < maximumDepth else {
                throw RedisError(.protocolViolation, "aggregates nest deeper than \(maximumDepth)")
            }
            let count = Int(count64)
            // Every element takes at least 3 bytes, so an announced count the bytes
            // cannot hold yet waits without reserving memory for it.
            var elements: [RESPValue] = []
            elements.reserveCapacity(min(count, (buffer.writerIndex - cursor) / 3 + 1))
            for _ in 0..<count {
                guard let element = try parseValue(buffer, at: &cursor, depth: depth + 1) else { return nil }
                elements.append(element)
            }
            switch type {
            case UInt8(ascii: ">"): value = .push(elements)
            case UInt8(ascii: "|"):
                // Attributes: metadata about the value that follows, which is the reply. Skipped.
                guard let reply = try parseValue(buffer, at: &cursor, depth: depth + 1) else { return nil }
                value = reply
            default: value = .array(elements)
            }
        default:
            throw RedisError(.protocolViolation, "unknown RESP type byte 0x\(String(type, radix: 16))")
        }
        offset = cursor
        return value
    }

    /// The range of the bytes up to the next CRLF, or `nil` if it has not arrived; throws past `limit` bytes.
    private func readLine(_ buffer: ByteBuffer, at cursor: inout Int, limit: Int) throws(RedisError) -> Range<Int>? {
        let available = buffer.writerIndex - cursor
        let searchLength = min(available, limit + 2)
        guard searchLength > 0, let view = buffer.viewBytes(at: cursor, length: searchLength) else {
            return nil
        }
        guard let carriageReturn = view.firstIndex(of: UInt8(ascii: "\r")) else {
            if available >= limit + 2 {
                throw RedisError(.protocolViolation, "a line is longer than \(limit) bytes or lacks its CRLF")
            }
            return nil
        }
        guard carriageReturn - cursor <= limit else {
            throw RedisError(.protocolViolation, "a line is longer than \(limit) bytes")
        }
        guard carriageReturn + 1 < view.endIndex else { return nil }
        guard view[carriageReturn + 1] == UInt8(ascii: "\n") else {
            throw RedisError(.protocolViolation, "a line ends in CR without LF")
        }
        let line = cursor..<carriageReturn
        if view[line].contains(UInt8(ascii: "\n")) {
            throw RedisError(.protocolViolation, "a line contains a bare LF")
        }
        cursor = carriageReturn + 2
        return line
    }

    private func readInteger(_ buffer: ByteBuffer, at cursor: inout Int) throws(RedisError) -> Int64? {
        var probe = cursor
        guard let line = try readLine(buffer, at: &probe, limit: 20) else { return nil }
        var digits = buffer.viewBytes(at: line.lowerBound, length: line.count)![...]
        var negative = false
        if digits.first == UInt8(ascii: "-") {
            negative = true
            digits = digits.dropFirst()
        } else if digits.first == UInt8(ascii: "+") {
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { throw RedisError(.protocolViolation, "an integer has no digits") }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else {
                throw RedisError(.protocolViolation, "an integer contains the byte 0x\(String(digit, radix: 16))")
            }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { throw RedisError(.protocolViolation, "an integer overflows 64 bits") }
            value = sum
        }
        cursor = probe
        return negative ? -value : value
    }
}
