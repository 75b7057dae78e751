#ifndef STASH_BENCH_CSQLITE_SHIM_H
#define STASH_BENCH_CSQLITE_SHIM_H
// The benchmarks' own link to the system SQLite: the root package's CSQLite
// module is not a product, so other packages cannot import it.
#include <sqlite3.h>
#endif
