import FuzzSupport
import Glibc
import RedisChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    checkInput(start, count, RESPCheck.check)
}

exit(runFuzzer(fuzzOne))
