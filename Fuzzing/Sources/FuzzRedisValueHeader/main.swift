import FuzzSupport
import Glibc
import RedisChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    checkInput(start, count, RedisValueHeaderCheck.check)
}

exit(runFuzzer(fuzzOne))
