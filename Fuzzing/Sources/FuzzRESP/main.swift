import FuzzSupport
import Glibc
import RedisChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    do {
        try RESPCheck.check(inputBytes(start, count))
    } catch {
        failProperty(error)
    }
    return 0
}

exit(runFuzzer(fuzzOne))
