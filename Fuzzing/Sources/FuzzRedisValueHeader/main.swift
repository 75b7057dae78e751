import FuzzSupport
import Glibc
import RedisChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    do {
        try RedisValueHeaderCheck.check(inputBytes(start, count))
    } catch where error.knownDefect {
        // A reported defect outside the fuzzed parsers (Fuzzing/README.md): go on past it.
    } catch {
        failProperty(error)
    }
    return 0
}

exit(runFuzzer(fuzzOne))
