#ifndef STASH_CFUZZERDRIVER_H
#define STASH_CFUZZERDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, LLVM 11 and later): runs the fuzzing loop with the given
/// arguments and one-input callback, as libFuzzer's own `main` would. Declared here because the
/// toolchain ships no header for it.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
