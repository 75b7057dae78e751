import CFuzzerDriver

/// Runs libFuzzer with this process's arguments and `body` as the one-input callback, and
/// returns its exit status.
///
/// Each fuzz target's `main.swift` calls it from top-level code. The target has a `main.swift`,
/// rather than `-parse-as-library` and libFuzzer's own `main`, because SwiftPM links an executable
/// target on Linux with `--defsym main=<Target>_main` and fails when the module defines no such
/// entry point (swiftlang/swift#75800); with this, libFuzzer's `main` is never linked in.
public func runFuzzer(_ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    return LLVMFuzzerRunDriver(&argc, &argv, body)
}

/// The bytes of one input, copied out of libFuzzer's buffer.
public func inputBytes(_ start: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let start, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: start, count: count))
}

/// Runs `check` on one input and returns 0, libFuzzer's "keep going"; a broken property stops
/// the process (``failProperty(_:)``). The body of every target's `LLVMFuzzerTestOneInput`.
public func checkInput(_ start: UnsafePointer<UInt8>?, _ count: Int, _ check: ([UInt8]) throws -> Void) -> CInt {
    do { try check(inputBytes(start, count)) } catch { failProperty(error) }
    return 0
}

/// Stops the process on a broken property, so that libFuzzer records the input as a crash.
public func failProperty(_ error: any Error) -> Never {
    fatalError("property violated: \(error)")
}
