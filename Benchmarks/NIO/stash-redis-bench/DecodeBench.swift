#if Redis
import BenchSupport
import Foundation
import NIOCore
import StashRedis

/// `stash-redis-bench decode MEGABYTES… [--rounds N] [--read BYTES]`: the RESP decoder on an array
/// reply of 100-byte bulk strings (an `MGET`'s shape) of each size, fed in one read and in reads of
/// `BYTES` (default 1,024), as a socket delivers a large reply. No server: the bytes are made here.
/// Prints one line a size: the medians over the rounds, in milliseconds of the thread's CPU time
/// (not wall time: the machine is shared, and a descheduled thread's wait is not the decoder's
/// cost), and their ratio.
func runDecodeBench(_ arguments: [String]) throws {
    var sizes: [Int] = []
    var rounds = 5
    var readSize = 1_024
    var index = 0
    while index < arguments.count {
        switch arguments[index] {
        case "--rounds": rounds = Int(arguments[index + 1])!; index += 2
        case "--read": readSize = Int(arguments[index + 1])!; index += 2
        default: sizes.append(Int(arguments[index])!); index += 1
        }
    }
    let element = Array("$100\r\n".utf8) + Array(repeating: UInt8(ascii: "v"), count: 100) + [13, 10]
    for megabytes in sizes {
        let count = megabytes * 1_048_576 / element.count
        var wire = Array("*\(count)\r\n".utf8)
        wire.reserveCapacity(wire.count + count * element.count)
        for _ in 0..<count { wire += element }
        var oneRead: [Double] = []
        var smallReads: [Double] = []
        for _ in 0..<rounds {
            oneRead.append(try decodeMilliseconds(wire, readSize: wire.count, expecting: count))
            smallReads.append(try decodeMilliseconds(wire, readSize: readSize, expecting: count))
        }
        let one = median(oneRead), small = median(smallReads)
        print("size_mb=\(megabytes) elements=\(count) one_read_ms=\(String(format: "%.2f", one))"
              + " reads_of_\(readSize)_ms=\(String(format: "%.2f", small)) ratio=\(String(format: "%.2f", small / one))")
    }
}

/// Milliseconds to decode `wire` arriving in reads of `readSize` bytes, as `ByteToMessageHandler`
/// feeds `RESPDecoder`: each read is appended to one buffer and the parser is called on it.
private func decodeMilliseconds(_ wire: [UInt8], readSize: Int, expecting count: Int) throws -> Double {
    var parser = RESPParser()
    var buffer = ByteBufferAllocator().buffer(capacity: min(wire.count, 1 << 16))
    var decoded: RESPValue?
    let start = threadCPUNanoseconds()
    var offset = 0
    while offset < wire.count {
        let end = min(offset + readSize, wire.count)
        buffer.writeBytes(wire[offset..<end])
        offset = end
        if let value = try parser.parse(&buffer) { decoded = value }
        // ByteToMessageHandler discards consumed bytes between reads in the same way.
        if buffer.readerIndex > buffer.capacity / 2 { buffer.discardReadBytes() }
    }
    let elapsed = threadCPUNanoseconds() - start
    guard case .array(let elements)? = decoded, elements.count == count else { fatalError("the reply did not decode") }
    return Double(elapsed) / 1e6
}

/// The CPU time the calling thread has used, in nanoseconds.
private func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
#endif  // Redis
