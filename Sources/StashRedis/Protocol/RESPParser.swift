#if Redis
import NIOCore

/// Parses RESP2 and RESP3 values from the front of a buffer as their bytes arrive. RESP3 types
/// are folded into RESP2's as ``RESPValue`` says; RESP3 attributes are skipped.
///
/// Incremental in linear time: each call consumes every complete scalar it finds and keeps the
/// aggregates whose elements are still arriving (their headers and the elements so far) in the
/// parser, so no byte is parsed twice, however many reads a large reply takes. A scalar that has
/// not fully arrived (a line without its CRLF, a bulk string short of its length) is left in the
/// buffer and read again from its type byte on the next call: that costs its header line, never
/// its payload. An `MGET` of many keys, arriving in many TCP reads, costs the same as one read of
/// the whole reply (figures in `docs/benchmarks.md`, "RESP decoding").
///
/// Every length the peer announces is checked against a limit before anything is allocated or
/// awaited, so a hostile or broken server can make it throw but never make it allocate more than
/// ``maximumBulkLength`` for one string, wait for a line longer than ``maximumLineLength``, or nest
/// deeper than ``maximumDepth``. An element takes at least three bytes, so the elements kept for
/// an open aggregate never outnumber the bytes received for it.
///
/// After it throws, the parser forgets the aggregates it held: the connection is unusable anyway.
///
/// Thread-safety: a value type; one parser per connection, mutated by its decoder alone.
package struct RESPParser: Sendable {
    /// The largest bulk string accepted, in bytes.
    package var maximumBulkLength: Int
    /// The largest array accepted, in elements.
    package var maximumArrayCount: Int
    /// The deepest nesting of arrays accepted.
    package var maximumDepth: Int
    /// The longest simple string, error or header line accepted, in bytes.
    package var maximumLineLength: Int

    /// The aggregates whose header was read and whose elements are still arriving, outermost first.
    private var open: [OpenAggregate] = []

    /// An aggregate being filled: its type byte, how many elements it still needs, and those it has.
    private struct OpenAggregate: Sendable {
        /// `*`, `~`, `>`, `%` or `|`; or ``RESPParser/attributedReply``, the one value an
        /// attribute precedes, which replaces the attribute.
        var type: UInt8
        var remaining: Int
        var elements: [RESPValue]
        /// How many of `elements` own their bytes (see ``RESPParser/detachKeptElements()``).
        var detached = 0
    }

    /// The marker of the value that follows an attribute (not a RESP type byte).
    private static let attributedReply: UInt8 = 0

    /// What one step of the parser read: a whole value, or the header of a non-empty aggregate
    /// (or of an attribute, which may be empty).
    private enum Item {
        case value(RESPValue)
        case aggregate(type: UInt8, count: Int)
    }

    package init(maximumBulkLength: Int = 512 * 1024 * 1024, maximumArrayCount: Int = 1 << 24,
                 maximumDepth: Int = 32, maximumLineLength: Int = 64 * 1024) {
        self.maximumBulkLength = maximumBulkLength
        self.maximumArrayCount = maximumArrayCount
        self.maximumDepth = maximumDepth
        self.maximumLineLength = maximumLineLength
    }

    /// Whether the parser holds part of a value: an aggregate whose elements have not all arrived.
    /// A connection that closes then has truncated a reply, even when its buffer is empty.
    package var isInsideValue: Bool { !open.isEmpty }

    /// Parses one value, consuming the bytes it has used; `nil` when more bytes are needed (the
    /// bytes of complete elements of an open aggregate are consumed and kept in the parser).
    ///
    /// - Complexity: O(n) in the bytes consumed, amortized over the calls that complete a value.
    /// - Throws: ``RedisError`` `.protocolViolation` for malformed input,
    ///   `.replyTooLarge` for a length over a limit.
    package mutating func parse(_ buffer: inout ByteBuffer) throws(RedisError) -> RESPValue? {
        do {
            return try parseSteps(&buffer)
        } catch {
            open.removeAll()
            throw error
        }
    }

    private mutating func parseSteps(_ buffer: inout ByteBuffer) throws(RedisError) -> RESPValue? {
        // The end of the last complete item: the reader index moves there once, on the way out.
        var cursor = buffer.readerIndex
        nextItem: while true {
            guard let item = try readItem(buffer, at: &cursor, depth: open.count) else {
                buffer.moveReaderIndex(to: cursor)
                detachKeptElements()
                return nil
            }
            var value: RESPValue
            switch consume item {
            case .value(let complete):
                value = complete
            case .aggregate(_, 0):
                // An empty attribute: only its reply follows.
                open.append(OpenAggregate(type: Self.attributedReply, remaining: 1, elements: []))
                continue nextItem
            case .aggregate(let type, let count):
                var elements: [RESPValue] = []
                // Reserve no more than the bytes at hand can hold (at least 3 bytes an element).
                elements.reserveCapacity(min(count, (buffer.writerIndex - cursor) / 3 + 1))
                open.append(OpenAggregate(type: type, remaining: count, elements: elements))
                continue nextItem
            }
            // Hand the value to the aggregates waiting for it, closing each that it completes.
            while !open.isEmpty {
                let last = open.count - 1
                open[last].elements.append(consume value)
                open[last].remaining -= 1
                guard open[last].remaining == 0 else { continue nextItem }
                let done = open.removeLast()
                switch done.type {
                case UInt8(ascii: "|"):
                    // Attributes: metadata about the value that follows, which is the reply. Skipped.
                    open.append(OpenAggregate(type: Self.attributedReply, remaining: 1, elements: []))
                    continue nextItem
                case Self.attributedReply: value = done.elements[0]
                case UInt8(ascii: ">"): value = .push(done.elements)
                default: value = .array(done.elements)
                }
            }
            buffer.moveReaderIndex(to: cursor)
            return value
        }
    }

    /// Copies the bytes of the elements kept in open aggregates out of the buffer, each element
    /// once, before the parser waits for more bytes. A bulk string is a slice of the buffer it
    /// arrived in, and `ByteBuffer` is copy-on-write: while a kept element shares the buffer's
    /// storage, every read appended to the buffer (and every `discardReadBytes`) would copy the
    /// whole buffer, many times the decoding itself for a reply arriving in small reads
    /// (docs/benchmarks.md, "RESP decoding"). A reply that arrives in one read keeps its
    /// zero-copy slices.
    ///
    /// - Complexity: O(n) in the bytes of the elements kept since the last call.
    private mutating func detachKeptElements() {
        for index in open.indices {
            while open[index].detached < open[index].elements.count {
                let element = open[index].detached
                open[index].elements[element] = open[index].elements[element].detached()
                open[index].detached += 1
            }
        }
    }

    /// Reads one scalar, or one aggregate's header, at `offset`; `nil` when its bytes have not all
    /// arrived. An empty aggregate is a whole value, except an attribute: its reply follows.
    private func readItem(_ buffer: ByteBuffer, at offset: inout Int, depth: Int) throws(RedisError) -> Item? {
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
            offset = cursor
            if count64 > 0 || type == UInt8(ascii: "|") { return .aggregate(type: type, count: Int(count64)) }
            return .value(type == UInt8(ascii: ">") ? .push([]) : .array([]))
        default:
            throw RedisError(.protocolViolation, "unknown RESP type byte 0x\(String(type, radix: 16))")
        }
        offset = cursor
        return .value(value)
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

extension RESPValue {
    /// The value with every bulk string copied into storage of its own.
    fileprivate func detached() -> RESPValue {
        switch self {
        case .bulkString(let bytes): .bulkString(ByteBuffer(bytes: bytes.readableBytesView))
        case .array(let elements): .array(elements.map { $0.detached() })
        case .push(let elements): .push(elements.map { $0.detached() })
        case .simpleString, .error, .integer, .null: self
        }
    }
}
#endif  // Redis
