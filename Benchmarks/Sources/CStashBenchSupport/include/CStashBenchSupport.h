#ifndef STASH_BENCH_SUPPORT_H
#define STASH_BENCH_SUPPORT_H

#include <stdint.h>

/// Bytes of heap the C allocator currently has handed out and not had back:
/// glibc's mallinfo2() `uordblks` (arena chunks in use) plus `hblkhd` (chunks
/// served by mmap, which is where large tables go). -1 where unavailable.
int64_t stash_bench_heap_bytes_in_use(void);

/// Returns the memory freed by the allocator to the system (glibc malloc_trim), best effort.
void stash_bench_heap_trim(void);

/// The file system type magic (statfs f_type) of the file system holding
/// `path`, or -1 where unknown.
int64_t stash_bench_file_system_type(const char *path);

#endif
