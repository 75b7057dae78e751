// stash-stress: the reliability tests' helper process.
//
// It works on a DiskCache in a loop and reports every operation on stdout, one
// line per event, written with a single write(2) (so nothing is buffered when it
// is killed). The tests in Tests/StashTests/Reliability/ start it, read its lines,
// kill it with SIGKILL at points they choose, and check the cache afterwards.
//
// Commands (all options are required unless a default is given):
//
//   crash --dir D --seed S --start-seq N [--keys K] [--inline-threshold T]
//       Forever: set a small (inline) value, set a large (file) value, or remove,
//       on a random key k0..k(K-1). Prints `B <seq> S <key#> <length>` or `B <seq> R <key#>`
//       before an operation and `A <seq>` once it has returned (acknowledged).
//
//   mixed --dir D --seed S --id P --duration-ms T
//       For T milliseconds: writes, removes and reads keys it owns (`p<P>-<i>`) and
//       keys shared with other processes (`s-<i>`). Checks each read (an owned key
//       must hold exactly its last acknowledged write; a shared key must hold a
//       well-formed value of that key) and prints `VIOLATION …` on a failure. At
//       the end prints `FINAL <key> <seq>` (or `FINAL <key> -` for absent) for every
//       owned key, then `DONE <operations>`.
//
//   fsize --dir D --limit BYTES
//       Sets RLIMIT_FSIZE to BYTES (SIGXFSZ ignored), then tries a large file write
//       and inline writes that must fail, printing `ERR <code>|<description>` for
//       each failure and `STORED <key>` for each success, then reads back every
//       entry the cache held before and prints `INTACT <count>` or `LOST <key>`.
//
// Values are self-describing (see StressValue): key, sequence number, payload and
// a checksum, so a reader can tell torn bytes or another key's bytes. The format is
// implemented once, in Tests/StressSupport, which the tests share.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Stash
import StashTestSupport
import StressSupport

// MARK: - Output

/// Writes one line to stdout with a single write(2): unbuffered, so a line is
/// either wholly in the pipe or not at all when the process is killed.
func emit(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { buffer in
            write(1, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written < 0 {
            if errno == EINTR { continue }
            exit(3)
        }
        offset += written
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("stash-stress: \(message)\n".utf8))
    exit(2)
}

// MARK: - Values

// MARK: - Arguments

var options: [String: String] = [:]
let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("no command (crash, mixed, fsize)") }
var index = 1
while index + 1 < arguments.count {
    guard arguments[index].hasPrefix("--") else { fail("unexpected argument \(arguments[index])") }
    options[String(arguments[index].dropFirst(2))] = arguments[index + 1]
    index += 2
}

@MainActor
func option(_ name: String, default value: String? = nil) -> String {
    guard let found = options[name] ?? value else { fail("missing --\(name)") }
    return found
}

@MainActor
func intOption(_ name: String, default value: Int? = nil) -> Int {
    guard let number = Int(option(name, default: value.map(String.init))) else { fail("--\(name) must be a number") }
    return number
}

// The caches log with swift-log's default handler, to stderr, which the tests
// keep in a file beside the cache.

func openCache(_ directory: String, inlineThreshold: Int = 4096, autoTrim: Duration? = nil) -> DiskCache<Data> {
    do {
        return try DiskCache<Data>(
            directory: directory,
            configuration: .init(storage: .mixed(inlineThreshold: inlineThreshold), autoTrimInterval: autoTrim))
    } catch {
        fail("cannot open the cache: \(error)")
    }
}

// MARK: - crash

@MainActor
func runCrash() -> Never {
    let inlineThreshold = intOption("inline-threshold", default: 4096)
    let cache = openCache(option("dir"), inlineThreshold: inlineThreshold)
    var rng = SeededGenerator(seed: UInt64(intOption("seed")))
    let keyCount = intOption("keys", default: 40)
    var seq = UInt64(intOption("start-seq"))
    emit("READY")
    while true {
        seq += 1
        let key = Int.random(in: 0..<keyCount, using: &rng)
        let name = "k\(key)"
        let roll = Int.random(in: 0..<100, using: &rng)
        do {
            if roll < 80 {
                // Small values stay inline; large ones are files of up to 320 KB.
                let length = roll < 45
                    ? Int.random(in: 40...min(3_000, inlineThreshold), using: &rng)
                    : Int.random(in: (inlineThreshold + 1)...max(327_680, inlineThreshold + 1), using: &rng)
                let value = StressValue.make(key: name, seq: seq, length: length)
                emit("B \(seq) S \(key) \(value.count)")
                try cache.setValue(value, forKey: name)
            } else {
                emit("B \(seq) R \(key)")
                try cache.removeValue(forKey: name)
            }
        } catch {
            fail("operation \(seq) on \(name) failed: \(error)")
        }
        emit("A \(seq)")
    }
}

// MARK: - mixed

@MainActor
func runMixed() -> Never {
    let id = intOption("id")
    // The cache lives only inside mixedSession, so it is deallocated before exit:
    // LeakSanitizer (in the address-sanitizer run) cannot see a live object's weak
    // reference side table, and would report it as leaked.
    let (owned, operations, violations) = mixedSession(
        directory: option("dir"), id: id, duration: .milliseconds(intOption("duration-ms")),
        seed: UInt64(intOption("seed")))
    for (key, state) in owned.enumerated() {
        emit("FINAL p\(id)-\(key) \(state.map { String($0) } ?? "-")")
    }
    emit("DONE \(operations) \(violations)")
    exit(0)
}

/// The work of `mixed`: returns each owned key's last acknowledged sequence
/// number (nil when removed), the operations done and the violations seen.
func mixedSession(directory: String, id: Int, duration: Duration, seed: UInt64) -> ([UInt64?], Int, Int) {
    var rng = SeededGenerator(seed: seed)
    // A short auto-trim interval, so the background maintenance runs too.
    let cache = openCache(directory, inlineThreshold: 2048, autoTrim: .milliseconds(250))
    let ownedCount = 24
    let sharedCount = 16
    var owned: [UInt64?] = Array(repeating: nil, count: ownedCount)
    var seq = UInt64(id) << 40
    var operations = 0
    var violations = 0
    let start = ContinuousClock.now

    func report(_ text: String) {
        violations += 1
        if violations <= 20 { emit("VIOLATION \(text)") }
    }

    while ContinuousClock.now - start < duration {
        for _ in 0..<16 {
            operations += 1
            seq += 1
            let roll = Int.random(in: 0..<100, using: &rng)
            let length = Int.random(in: 0..<4, using: &rng) == 0
                ? Int.random(in: 4_096...65_536, using: &rng) : Int.random(in: 40...1_500, using: &rng)
            do {
                switch roll {
                case 0..<30:
                    let key = Int.random(in: 0..<ownedCount, using: &rng)
                    try cache.setValue(StressValue.make(key: "p\(id)-\(key)", seq: seq, length: length), forKey: "p\(id)-\(key)")
                    owned[key] = seq
                case 30..<40:
                    let key = Int.random(in: 0..<ownedCount, using: &rng)
                    try cache.removeValue(forKey: "p\(id)-\(key)")
                    owned[key] = nil
                case 40..<60:
                    let key = Int.random(in: 0..<ownedCount, using: &rng)
                    let name = "p\(id)-\(key)"
                    let found = try cache.value(forKey: name)
                    let seq = found.flatMap { StressValue.seq(of: $0, key: name) }
                    if (found == nil && owned[key] != nil) || (found != nil && (seq == nil || seq != owned[key])) {
                        let what = found.map { "\($0.count) bytes, seq \(String(describing: seq))" } ?? "nothing"
                        report("\(name) read \(what), expected seq \(String(describing: owned[key]))")
                    }
                case 60..<80:
                    let key = Int.random(in: 0..<sharedCount, using: &rng)
                    try cache.setValue(StressValue.make(key: "s-\(key)", seq: seq, length: length), forKey: "s-\(key)")
                case 80..<85:
                    try cache.removeValue(forKey: "s-\(Int.random(in: 0..<sharedCount, using: &rng))")
                case 85..<97:
                    let name = "s-\(Int.random(in: 0..<sharedCount, using: &rng))"
                    if let bytes = try cache.value(forKey: name), StressValue.seq(of: bytes, key: name) == nil {
                        report("\(name) read \(bytes.count) malformed or foreign bytes")
                        continue
                    }
                default:
                    _ = try cache.contains("s-\(Int.random(in: 0..<sharedCount, using: &rng))")
                    _ = try cache.count
                }
            } catch {
                report("operation \(seq) threw \(error)")
            }
        }
    }
    cache.close()
    return (owned, operations, violations)
}

// MARK: - fsize

@MainActor
func runFileSizeLimit() -> Never {
    // As for mixed: the cache and the values live only inside the session.
    fileSizeSession(directory: option("dir"), limit: intOption("limit"))
    exit(0)
}

func fileSizeSession(directory: String, limit: Int) {
    // Past the limit the kernel sends SIGXFSZ, whose default action kills the
    // process: ignore it, so the write fails with EFBIG instead.
    signal(SIGXFSZ, SIG_IGN)
    var rlim = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
    #if canImport(Darwin)
    let resource = RLIMIT_FSIZE  // a macro (Int32) on Darwin, an enum on Glibc
    #else
    let resource = Int32(RLIMIT_FSIZE.rawValue)
    #endif
    guard setrlimit(resource, &rlim) == 0 else { fail("setrlimit failed: errno \(errno)") }

    let cache = openCache(directory, inlineThreshold: 4096)
    // What the cache held before: the test stored values of keys "before-<i>".
    var before: [String: Data] = [:]
    for index in 0..<1_000 {
        let key = "before-\(index)"
        guard let value = try? cache.value(forKey: key) else { break }
        before[key] = value
    }
    emit("BEFORE \(before.count)")

    func attempt(_ key: String, _ length: Int) {
        do {
            try cache.setValue(StressValue.make(key: key, seq: 1, length: length), forKey: key)
            emit("STORED \(key)")
        } catch {
            emit("ERR \(error.code)|\(error)")
        }
    }
    attempt("too-large-file", limit * 2)
    // Inline writes grow the WAL until it reaches the limit.
    for index in 0..<400 {
        attempt("inline-\(index)", 3_000)
    }
    attempt("before-0", limit * 2)  // an overwrite that fails must keep the old value

    var lost = 0
    for (key, value) in before.sorted(by: { $0.key < $1.key }) {
        let read: Data?
        do {
            read = try cache.value(forKey: key)
        } catch {
            emit("LOST \(key) \(error)")
            lost += 1
            continue
        }
        if read != value {
            emit("LOST \(key) read \(read?.count ?? -1) bytes")
            lost += 1
        }
    }
    emit(lost == 0 ? "INTACT \(before.count)" : "DAMAGED \(lost)")
    cache.close()
}

switch command {
case "crash": runCrash()
case "mixed": runMixed()
case "fsize": runFileSizeLimit()
default: fail("unknown command \(command)")
}
