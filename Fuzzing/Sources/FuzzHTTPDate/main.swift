import FuzzSupport
import Glibc
import HTTPChecks

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    checkInput(start, count, HTTPDateCheck.check)
}

exit(runFuzzer(fuzzOne))
