// The declaration is all: the definition is in libclang_rt.fuzzer, linked by -sanitize=fuzzer.
#include "CFuzzerDriver.h"
