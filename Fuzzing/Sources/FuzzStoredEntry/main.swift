import FuzzSupport
import Glibc
import HTTPChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    checkInput(start, count, StoredEntryCheck.check)
}

exit(runFuzzer(fuzzOne))
