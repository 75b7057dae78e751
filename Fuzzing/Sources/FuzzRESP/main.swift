import FuzzSupport
import Glibc
#if Redis
import RedisChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    checkInput(start, count, RESPCheck.check)
}

exit(runFuzzer(fuzzOne))
#else
// Built without the `Redis` trait: nothing to fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { 0 }

print("FuzzRESP: built without the Redis trait (swift build --package-path Fuzzing without --disable-default-traits)")
exit(2)
#endif
