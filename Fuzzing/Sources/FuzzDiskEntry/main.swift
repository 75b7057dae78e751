import FuzzSupport
import Glibc
import DiskChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    checkInput(start, count, DiskEntryCheck.check)
}

exit(runFuzzer(fuzzOne))
