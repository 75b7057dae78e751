#include "CStashBenchSupport.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int64_t stash_bench_heap_bytes_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return (int64_t)info.uordblks + (int64_t)info.hblkhd;
#else
    return -1;
#endif
}

void stash_bench_heap_trim(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

#if defined(__linux__)
#include <sys/vfs.h>
#endif

int64_t stash_bench_file_system_type(const char *path) {
#if defined(__linux__)
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (int64_t)(uint32_t)info.f_type;
#else
    (void)path;
    return -1;
#endif
}
